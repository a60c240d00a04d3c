package io.jobq.application.port;

import io.jobq.domain.fairness.MaxRunning;
import io.jobq.domain.fairness.TenantWeight;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.tenant.TenantId;
import java.util.Objects;
import java.util.Optional;

/**
 * A tenant's settings in one queue: its weight, and its cap if it has one.
 *
 * @param maxRunning at most this many of the tenant's jobs queued or running in the queue; empty: no cap
 */
public record TenantSettings(TenantId tenant, QueueName queue, TenantWeight weight, Optional<MaxRunning> maxRunning) {
    public TenantSettings {
        Objects.requireNonNull(tenant, "tenant");
        Objects.requireNonNull(queue, "queue");
        Objects.requireNonNull(weight, "weight");
        Objects.requireNonNull(maxRunning, "maxRunning");
    }
}
