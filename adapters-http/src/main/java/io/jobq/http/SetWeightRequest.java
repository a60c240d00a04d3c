package io.jobq.http;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.jobq.domain.fairness.TenantWeight;
import io.jobq.domain.job.QueueName;
import java.util.Set;

/**
 * The body of {@code PUT /tenants/{tenant}}: {@code {"weight": 3, "queue": "default"}}.
 *
 * @param weight required; a number from 0.000001 to 1,000,000 ({@link TenantWeight}'s range, checked on the
 *     exact decimal). With weights 3 and 1, two backlogged tenants are served 3:1.
 * @param queue the queue the weight applies in; default {@code "default"}
 */
public record SetWeightRequest(TenantWeight weight, String queue) {
    static final Set<String> FIELDS = Set.of("weight", "queue");

    /** @throws ApiException 400 naming the first field at fault */
    static SetWeightRequest from(ObjectNode body) {
        Fields f = new Fields(body, FIELDS);
        TenantWeight weight = f.requiredNumber("weight", TenantWeight::of);
        return new SetWeightRequest(weight, f.identifierOr("queue", QueueName.DEFAULT.value()));
    }
}
