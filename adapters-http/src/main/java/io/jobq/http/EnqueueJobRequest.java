package io.jobq.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.jobq.application.port.NewJob;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobLimits;
import io.jobq.domain.job.JsonNumbers;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.tenant.TenantId;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.Set;

/**
 * The body of {@code POST /jobs}, validated. Limits are the domain's ({@link JobLimits}, {@code Identifier},
 * {@link JsonNumbers}), the same a job enqueued through the Java client must respect.
 *
 * <pre>{@code {"task": "word_count", "payload": {"text": "hi"}, "tenant": "acme", "queue": "default",
 *  "idempotency_key": "order-17", "max_attempts": 5, "delay_seconds": 0}}</pre>
 *
 * @param task required; 1-128 characters of {@code [A-Za-z0-9_.:-]}
 * @param payload JSON text of any JSON value; default {@code {}}. No string or key at any depth may hold
 *     NUL or a lone surrogate, and numbers must fit PostgreSQL numeric.
 * @param tenant like task; default {@code "default"}
 * @param queue like task; default {@code "default"}
 * @param idempotencyKey 1-255 characters (UTF-16 code units), no NUL or lone surrogate; unique per tenant
 * @param maxAttempts an integer 1-100; default 5
 * @param delay {@code delay_seconds}: a number 0-31,536,000 (365 days), millisecond resolution; default 0
 *     (runnable at once), else scheduled at the database's {@code now() + delay}; or {@code run_at}, an
 *     ISO-8601 instant, as a delay by this server's clock ({@link StartTime}), not both
 * @param priority an integer 0-9, default 0: higher runs first among the tenant's own jobs
 */
public record EnqueueJobRequest(String task, String payload, String tenant, String queue, Optional<String> idempotencyKey,
        int maxAttempts, Duration delay, int priority) {

    static final Set<String> FIELDS = Set.of("task", "payload", "tenant", "queue", "idempotency_key", "max_attempts", "delay_seconds", "run_at",
            "priority");

    /** @throws ApiException 400 naming the first field at fault */
    static EnqueueJobRequest from(ObjectNode body) {
        return from(body, TenantId.DEFAULT);
    }

    /** @param defaultTenant the tenant when the body names none (a tenant key's own) */
    static EnqueueJobRequest from(ObjectNode body, TenantId defaultTenant) {
        Fields f = new Fields(body, FIELDS);
        String task = f.requiredIdentifier("task");
        String tenant = f.identifierOr("tenant", defaultTenant.value());
        String queue = f.identifierOr("queue", QueueName.DEFAULT.value());
        Optional<String> key = f.string("idempotency_key", JobLimits::requireIdempotencyKey);
        int maxAttempts = f.integerOr("max_attempts", JobLimits::maxAttemptsOf, Job.DEFAULT_MAX_ATTEMPTS);
        Duration delay = StartTime.delay(f, Instant.now());
        int priority = f.integerOr("priority", JobLimits::priorityOf, 0);
        return new EnqueueJobRequest(task, payloadOf(body), tenant, queue, key, maxAttempts, delay, priority);
    }

    /**
     * The body's {@code payload} as JSON text, {@code {}} when absent (also for schedules' jobs).
     *
     * @throws ApiException 400 naming {@code payload} if it could not be stored and read back
     */
    static String payloadOf(ObjectNode body) {
        // payload is "any JSON value", so JSON null is a value here, not an absent field
        JsonNode payloadNode = body.has("payload") ? body.get("payload") : JsonNodeFactory.instance.objectNode();
        JsonBodies.unstorable("payload", payloadNode).ifPresent(why -> {
            throw ApiException.invalid("payload", why);
        });
        String payload = JsonBodies.toJson(payloadNode);
        JsonNumbers.unreadablePayload("payload", payload).ifPresent(why -> {
            throw ApiException.invalid("payload", why);
        });
        return payload;
    }

    NewJob toNewJob() {
        return new NewJob(TenantId.of(tenant), QueueName.of(queue), TaskName.of(task), payload, maxAttempts, delay, idempotencyKey,
                priority);
    }
}
