package io.jobq.application.port;

import io.jobq.domain.fairness.MaxRunning;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.tenant.TenantId;
import java.util.Objects;

/**
 * Where a capped tenant stands in one queue ({@link JobStore#capUsage}).
 *
 * @param running its jobs running now (never above {@code maxRunning} once runs started before a cap was
 *     lowered have ended)
 * @param held its runnable jobs waiting for a slot under the cap
 */
public record CapUsage(QueueName queue, TenantId tenant, MaxRunning maxRunning, long running, long held) {
    public CapUsage {
        Objects.requireNonNull(queue, "queue");
        Objects.requireNonNull(tenant, "tenant");
        Objects.requireNonNull(maxRunning, "maxRunning");
    }
}
