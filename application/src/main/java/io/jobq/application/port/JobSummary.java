package io.jobq.application.port;

import io.jobq.domain.job.JobId;
import io.jobq.domain.job.JobState;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.tenant.TenantId;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * A job as a list shows it ({@link JobStore#summaries}): without its payload and result, which may be megabytes
 * each, and with the start of its last error only.
 *
 * @param lastErrorStart the first {@value #ERROR_START} characters of the last error, or fewer
 */
public record JobSummary(JobId id, TenantId tenant, QueueName queue, TaskName task, JobState state, int attempts,
                         int maxAttempts, Instant createdAt, Optional<Instant> finishedAt, Optional<String> lastErrorStart) {
    /** How much of the last error a summary carries, in characters. */
    public static final int ERROR_START = 200;

    public JobSummary {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(tenant, "tenant");
        Objects.requireNonNull(queue, "queue");
        Objects.requireNonNull(task, "task");
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(createdAt, "createdAt");
        Objects.requireNonNull(finishedAt, "finishedAt");
        Objects.requireNonNull(lastErrorStart, "lastErrorStart");
    }
}
