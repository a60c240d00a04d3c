package io.jobq.application.port;

import io.jobq.domain.job.QueueName;
import io.jobq.domain.fairness.MaxRunning;
import io.jobq.domain.tenant.TenantId;
import io.jobq.domain.fairness.TenantWeight;
import java.util.Objects;
import java.util.Optional;

/**
 * One tenant of one queue as a dashboard shows it ({@link JobStore#tenantActivity}): its settings and its
 * live jobs, counted exactly.
 *
 * @param queued runnable jobs waiting for their fair turn
 * @param held runnable jobs waiting for a slot under the tenant's cap
 * @param running jobs leased to a worker now
 */
public record TenantActivity(QueueName queue, TenantId tenant, TenantWeight weight, Optional<MaxRunning> maxRunning,
                             long queued, long held, long running) {
    public TenantActivity {
        Objects.requireNonNull(queue, "queue");
        Objects.requireNonNull(tenant, "tenant");
        Objects.requireNonNull(weight, "weight");
        Objects.requireNonNull(maxRunning, "maxRunning");
    }

    /** Jobs waiting to run: queued and held. */
    public long backlog() {
        return queued + held;
    }
}
