package io.jobq.domain.lease;

import io.jobq.domain.job.JobId;
import java.util.Objects;

/**
 * Identifies one run of one job: the worker that claimed it and the attempt number the claim
 * produced. complete, fail and heartbeat apply only while the row still carries this exact pair,
 * so a stale worker (lease expired, job re-claimed, even by the same worker id) cannot overwrite
 * a newer run. The worker id alone is not enough: a restarted process may reuse it, and the same
 * worker may be handed the same job again; only the attempt tells the two runs apart.
 */
public record FencingToken(JobId job, WorkerId worker, int attempt) {
    /** @throws IllegalArgumentException if {@code attempt < 1} (a claim always produces attempt >= 1) */
    public FencingToken {
        Objects.requireNonNull(job, "job");
        Objects.requireNonNull(worker, "worker");
        if (attempt < 1) throw new IllegalArgumentException("attempt must be >= 1, was " + attempt);
    }

    @Override
    public String toString() {
        return job + "/" + worker + "#" + attempt;
    }
}
