package io.jobq.application.port;

import io.jobq.domain.job.JobId;
import io.jobq.domain.job.JobState;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.tenant.TenantId;
import java.util.Objects;
import java.util.Optional;

/**
 * A page request for listing jobs, newest first (descending id), keyset-paginated: the next page
 * starts after the last id of this one.
 *
 * @param task only jobs of this task, when present
 * @param limit 1..500
 * @param after only jobs with an id below this one
 */
public record JobQuery(
        Optional<TenantId> tenant, Optional<QueueName> queue, Optional<JobState> state, Optional<TaskName> task, int limit, Optional<JobId> after) {
    /** Page size when none is asked for. */
    public static final int DEFAULT_LIMIT = 50;
    /** Largest page. */
    public static final int MAX_LIMIT = 500;

    public JobQuery {
        Objects.requireNonNull(tenant, "tenant");
        Objects.requireNonNull(queue, "queue");
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(task, "task");
        Objects.requireNonNull(after, "after");
        if (limit < 1 || limit > MAX_LIMIT) throw new IllegalArgumentException("limit must be 1-" + MAX_LIMIT + ", was " + limit);
    }

    public static JobQuery firstPage() {
        return new JobQuery(Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), DEFAULT_LIMIT, Optional.empty());
    }

    /** This query restricted to {@code only}'s jobs (whatever tenant it named, if any). */
    public JobQuery forTenant(TenantId only) {
        return new JobQuery(Optional.of(only), queue, state, task, limit, after);
    }

    /** The same filters, {@code size} jobs after {@code last}: the next page, or a probe for one. */
    public JobQuery after(JobId last, int size) {
        return new JobQuery(tenant, queue, state, task, size, Optional.of(last));
    }
}
