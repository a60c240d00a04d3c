package io.jobq.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.jobq.application.port.TenantUpdate;
import io.jobq.domain.fairness.MaxRunning;
import io.jobq.domain.fairness.TenantWeight;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.tenant.TenantId;
import java.util.Optional;
import java.util.Set;

/**
 * The body of {@code PUT /tenants/{tenant}}: {@code {"queue": "default", "weight": 3, "max_running": 2}};
 * at least one of {@code weight} and {@code max_running}, and what is left out stays as it is.
 *
 * <ul>
 *   <li>{@code weight}: a number from 0.000001 to 1,000,000 ({@link TenantWeight}'s range, checked on the
 *       exact decimal). With weights 3 and 1, two backlogged tenants are served 3:1.</li>
 *   <li>{@code max_running}: an integer from 1 to 1,000,000, the most of the tenant's jobs in the queue
 *       that run at once, across every worker; {@code null} removes the cap.</li>
 *   <li>{@code queue}: the queue the settings apply in; default {@code "default"}.</li>
 * </ul>
 */
record TenantRequest(String queue, Optional<TenantWeight> weight, TenantUpdate.CapChange cap) {
    static final Set<String> FIELDS = Set.of("weight", "queue", "max_running");

    /** @throws ApiException 400 naming the first field at fault */
    static TenantRequest from(ObjectNode body) {
        Fields f = new Fields(body, FIELDS);
        String queue = f.identifierOr("queue", QueueName.DEFAULT.value());
        Optional<TenantWeight> weight = Optional.ofNullable(f.numberOr("weight", TenantWeight::of, null));
        TenantUpdate.CapChange cap = capChange(body, f);
        if (weight.isEmpty() && cap instanceof TenantUpdate.CapChange.Keep) {
            throw new ApiException(400, "missing_field", "weight or max_running is required", "weight");
        }
        return new TenantRequest(queue, weight, cap);
    }

    /** Absent: keep the cap; JSON null: remove it; an integer: set it. */
    private static TenantUpdate.CapChange capChange(ObjectNode body, Fields f) {
        JsonNode node = body.get("max_running");
        if (node == null) return TenantUpdate.CapChange.KEEP;
        if (node.isNull()) return TenantUpdate.CapChange.REMOVE;
        return new TenantUpdate.CapChange.SetTo(f.integerOr("max_running", MaxRunning::of, null));
    }

    TenantUpdate toUpdate(TenantId tenant) {
        return new TenantUpdate(tenant, QueueName.of(queue), weight, cap);
    }
}
