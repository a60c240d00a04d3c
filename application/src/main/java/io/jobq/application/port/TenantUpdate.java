package io.jobq.application.port;

import io.jobq.domain.fairness.MaxRunning;
import io.jobq.domain.fairness.TenantWeight;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.tenant.TenantId;
import java.util.Objects;
import java.util.Optional;

/**
 * A change to a tenant's settings in one queue ({@link JobStore#configureTenant}); what it leaves out
 * stays as it is. A tenant nobody configured has weight 1 and no cap.
 *
 * @param weight the new weight, or empty to keep it
 * @param cap what to do with the cap: keep it, remove it, or set it
 */
public record TenantUpdate(TenantId tenant, QueueName queue, Optional<TenantWeight> weight, CapChange cap) {
    public TenantUpdate {
        Objects.requireNonNull(tenant, "tenant");
        Objects.requireNonNull(queue, "queue");
        Objects.requireNonNull(weight, "weight");
        Objects.requireNonNull(cap, "cap");
    }

    /** Sets the weight only. */
    public static TenantUpdate weight(TenantId tenant, QueueName queue, TenantWeight weight) {
        return new TenantUpdate(tenant, queue, Optional.of(weight), CapChange.KEEP);
    }

    /** Sets the cap only: {@code max} of the tenant's jobs queued or running at once; empty removes the cap. */
    public static TenantUpdate cap(TenantId tenant, QueueName queue, Optional<MaxRunning> max) {
        return new TenantUpdate(tenant, queue, Optional.empty(), max.<CapChange>map(CapChange.SetTo::new).orElse(CapChange.REMOVE));
    }

    /** What a {@link TenantUpdate} does to the cap. */
    public sealed interface CapChange {
        /** Leaves the cap as it is. */
        CapChange KEEP = new Keep();
        /** Removes the cap: every held job is released at once. */
        CapChange REMOVE = new Remove();

        record Keep() implements CapChange {}

        record Remove() implements CapChange {}

        /** Sets the cap; lowering it never stops a running job, it only holds queued ones. */
        record SetTo(MaxRunning max) implements CapChange {
            public SetTo {
                Objects.requireNonNull(max, "max");
            }
        }
    }
}
