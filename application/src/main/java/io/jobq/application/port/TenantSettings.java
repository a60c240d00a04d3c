package io.jobq.application.port;

import io.jobq.domain.fairness.TenantWeight;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.tenant.TenantId;
import java.util.Objects;

/** A tenant's weight in one queue. */
public record TenantSettings(TenantId tenant, QueueName queue, TenantWeight weight) {
    public TenantSettings {
        Objects.requireNonNull(tenant, "tenant");
        Objects.requireNonNull(queue, "queue");
        Objects.requireNonNull(weight, "weight");
    }
}
