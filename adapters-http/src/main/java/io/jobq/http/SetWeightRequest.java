package io.jobq.http;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.jobq.domain.job.QueueName;
import java.math.BigDecimal;
import java.util.Set;

/**
 * The body of {@code PUT /tenants/{tenant}}: {@code {"weight": 3, "queue": "default"}}.
 *
 * @param weight required; a number {@code > 0} and {@code <= 10,000}. With weights 3 and 1, two
 *     backlogged tenants are served 3:1.
 * @param queue the queue the weight applies in; default {@code "default"}
 */
public record SetWeightRequest(double weight, String queue) {
    /** Largest accepted weight. */
    public static final double MAX_WEIGHT = 10_000;

    static final Set<String> FIELDS = Set.of("weight", "queue");

    static SetWeightRequest from(ObjectNode body) {
        Fields f = new Fields(body, FIELDS);
        String range = "> 0 and <= 10000";
        BigDecimal w = Fields.number("weight", f.required("weight"), range);
        if (w.signum() <= 0 || w.compareTo(BigDecimal.valueOf(MAX_WEIGHT)) > 0) {
            throw ApiException.invalid("weight", "weight must be " + range + ", was " + w.toPlainString());
        }
        double weight = w.doubleValue();
        // 1e-400 is > 0 as a decimal but 0 as a double; the tenant weight must stay positive and 1/weight finite
        if (!(weight > 0) || Double.isInfinite(1.0 / weight)) {
            throw ApiException.invalid("weight", "weight is too small to use, was " + w.toPlainString());
        }
        return new SetWeightRequest(weight, f.identifierOr("queue", QueueName.DEFAULT.value()));
    }
}
