package io.jobq.application.port;

import io.jobq.domain.job.QueueName;
import io.jobq.domain.lease.WorkerId;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * Ask for up to {@code limit} runnable jobs from {@code queues}, leased to {@code worker} for
 * {@code leaseFor} from the database's {@code now()}.
 *
 * @param queues 1 or more distinct queues
 * @param limit 1..1,000 jobs
 * @param leaseFor positive
 */
public record ClaimRequest(List<QueueName> queues, WorkerId worker, int limit, Duration leaseFor) {
    public ClaimRequest {
        queues = List.copyOf(queues);
        Objects.requireNonNull(worker, "worker");
        Objects.requireNonNull(leaseFor, "leaseFor");
        if (queues.isEmpty()) throw new IllegalArgumentException("queues must not be empty");
        if (queues.stream().distinct().count() != queues.size()) throw new IllegalArgumentException("queues must be distinct: " + queues);
        if (limit < 1 || limit > 1000) throw new IllegalArgumentException("limit must be 1-1000, was " + limit);
        if (leaseFor.toMillis() < 1) throw new IllegalArgumentException("leaseFor must be positive, was " + leaseFor);
    }
}
