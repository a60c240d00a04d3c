package io.jobq.application.port;

import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobLimits;
import io.jobq.domain.job.JsonNumbers;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.StoredText;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.tenant.TenantId;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * One job to enqueue. Field limits are {@link JobLimits}', the same the HTTP API checks.
 *
 * @param payload JSON text (any JSON value). Refused here (IllegalArgumentException naming the field): more
 *     than {@link Job#MAX_PAYLOAD_BYTES} (1 MiB) of UTF-8, a NUL character or a lone surrogate, and numbers
 *     PostgreSQL would print over 1 MiB longer than written or with more than 1,000 digits ({@link JsonNumbers}). Refused by the store (also IllegalArgumentException):
 *     text that is not JSON, a {@code \u0000} escape, a number beyond numeric's range.
 * @param maxAttempts 1..100
 * @param delay zero for runnable now (queued with a fair vtime); positive for scheduled at the
 *     database's {@code now() + delay}; at most 365 days
 * @param idempotencyKey 1..255 characters without NUL or lone surrogates, unique per tenant; a repeat
 *     returns the original job
 * @param priority 0..9 (default 0), higher first among the tenant's own queued jobs; never ahead of other
 *     tenants' fair share ({@link JobStore#enqueue})
 */
public record NewJob(
        TenantId tenant,
        QueueName queue,
        TaskName task,
        String payload,
        int maxAttempts,
        Duration delay,
        Optional<String> idempotencyKey,
        int priority) {

    /** @throws IllegalArgumentException naming the field that is out of range */
    public NewJob {
        Objects.requireNonNull(tenant, "tenant");
        Objects.requireNonNull(queue, "queue");
        Objects.requireNonNull(task, "task");
        Objects.requireNonNull(payload, "payload");
        Objects.requireNonNull(delay, "delay");
        Objects.requireNonNull(idempotencyKey, "idempotencyKey");
        JobLimits.requireMaxAttempts(maxAttempts);
        JobLimits.requireDelay(delay);
        StoredText.requireStorable("payload", payload);
        JsonNumbers.requireReadableBack("payload", payload);
        idempotencyKey.ifPresent(JobLimits::requireIdempotencyKey);
        JobLimits.requirePriority(priority);
    }

    /** A job of priority 0. */
    public NewJob(TenantId tenant, QueueName queue, TaskName task, String payload, int maxAttempts, Duration delay,
            Optional<String> idempotencyKey) {
        this(tenant, queue, task, payload, maxAttempts, delay, idempotencyKey, 0);
    }

    /** A runnable job with an empty payload, the default attempt budget and no key. */
    public static NewJob of(TenantId tenant, QueueName queue, TaskName task, String payload) {
        return new NewJob(tenant, queue, task, payload, Job.DEFAULT_MAX_ATTEMPTS, Duration.ZERO, Optional.empty());
    }

    public NewJob withDelay(Duration newDelay) {
        return new NewJob(tenant, queue, task, payload, maxAttempts, newDelay, idempotencyKey, priority);
    }

    public NewJob withMaxAttempts(int newMaxAttempts) {
        return new NewJob(tenant, queue, task, payload, newMaxAttempts, delay, idempotencyKey, priority);
    }

    public NewJob withIdempotencyKey(String key) {
        return new NewJob(tenant, queue, task, payload, maxAttempts, delay, Optional.of(key), priority);
    }

    public NewJob withPriority(int newPriority) {
        return new NewJob(tenant, queue, task, payload, maxAttempts, delay, idempotencyKey, newPriority);
    }
}
