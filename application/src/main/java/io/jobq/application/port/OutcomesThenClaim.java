package io.jobq.application.port;

import io.jobq.domain.job.Job;
import java.util.List;
import java.util.Objects;

/**
 * What {@link JobStore#recordOutcomesThenClaim} answers.
 *
 * @param answers one per outcome written, in the order they were handed in
 * @param claimed 0..limit running jobs in claim order, as {@link JobStore#claim} returns them
 */
public record OutcomesThenClaim(List<FencedWrite> answers, List<Job> claimed) {
    public OutcomesThenClaim {
        answers = List.copyOf(Objects.requireNonNull(answers, "answers"));
        claimed = List.copyOf(Objects.requireNonNull(claimed, "claimed"));
    }
}
