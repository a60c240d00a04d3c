package io.jobq.application.port;

import io.jobq.domain.job.JobState;
import io.jobq.domain.job.QueueName;
import java.time.Instant;
import java.util.Objects;

/**
 * How many jobs of one queue reached one final state within one minute ({@link JobStore#finishedPerMinute}).
 *
 * @param minute the minute's start, by the store's clock (seconds and below are zero)
 * @param state {@code DONE}, {@code DEAD} or {@code CANCELLED}
 * @param count at least 1 (minutes without jobs are absent)
 */
public record FinishedCount(Instant minute, QueueName queue, JobState state, long count) {
    public FinishedCount {
        Objects.requireNonNull(minute, "minute");
        Objects.requireNonNull(queue, "queue");
        Objects.requireNonNull(state, "state");
    }
}
