package io.jobq.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.jobq.application.port.NewJobBatch;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobLimits;
import io.jobq.domain.job.JsonNumbers;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.tenant.TenantId;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The body of {@code POST /jobs/batch}, validated: one tenant, queue and task, 1-1,000 payloads.
 *
 * <pre>{@code {"task": "resize", "payloads": [{"id": 1}, {"id": 2}], "tenant": "acme", "queue": "default",
 *  "max_attempts": 5, "delay_seconds": 0}}</pre>
 *
 * Fields as in {@link EnqueueJobRequest}; there is no idempotency key. {@code payloads} must be an
 * array of 1 to {@value NewJobBatch#MAX_SIZE} JSON values, each storable like a single job's payload;
 * if any element is refused, no job is written.
 */
public record EnqueueBatchRequest(String task, List<String> payloads, String tenant, String queue, int maxAttempts, Duration delay,
        int priority) {

    static final Set<String> FIELDS = Set.of("task", "payloads", "tenant", "queue", "max_attempts", "delay_seconds", "run_at",
            "priority");

    /** @throws ApiException 400 naming the first field at fault; for payloads the message names the element */
    static EnqueueBatchRequest from(ObjectNode body) {
        return from(body, TenantId.DEFAULT);
    }

    /** @param defaultTenant the tenant when the body names none (a tenant key's own) */
    static EnqueueBatchRequest from(ObjectNode body, TenantId defaultTenant) {
        Fields f = new Fields(body, FIELDS);
        String task = f.requiredIdentifier("task");
        String tenant = f.identifierOr("tenant", defaultTenant.value());
        String queue = f.identifierOr("queue", QueueName.DEFAULT.value());
        int maxAttempts = f.integerOr("max_attempts", JobLimits::maxAttemptsOf, Job.DEFAULT_MAX_ATTEMPTS);
        int priority = f.integerOr("priority", JobLimits::priorityOf, 0);
        Duration delay = StartTime.delay(f, Instant.now());
        JsonNode array = f.required("payloads");
        String limit = "payloads must be an array of 1-" + NewJobBatch.MAX_SIZE + " JSON values";
        if (!array.isArray()) throw ApiException.invalid("payloads", limit + ", was " + array.getNodeType().name().toLowerCase(java.util.Locale.ROOT));
        if (array.isEmpty() || array.size() > NewJobBatch.MAX_SIZE) {
            throw ApiException.invalid("payloads", limit + ", had " + array.size());
        }
        List<String> payloads = new ArrayList<>(array.size());
        for (int i = 0; i < array.size(); i++) {
            JsonNode p = array.get(i);
            JsonBodies.unstorable("payloads[" + i + "]", p).ifPresent(why -> {
                throw ApiException.invalid("payloads", why);
            });
            String payload = JsonBodies.toJson(p);
            JsonNumbers.unreadablePayload("payloads[" + i + "]", payload).ifPresent(why -> {
                throw ApiException.invalid("payloads", why);
            });
            payloads.add(payload);
        }
        return new EnqueueBatchRequest(task, List.copyOf(payloads), tenant, queue, maxAttempts, delay, priority);
    }

    NewJobBatch toNewJobBatch() {
        return new NewJobBatch(TenantId.of(tenant), QueueName.of(queue), TaskName.of(task), payloads, maxAttempts, delay, priority);
    }
}
