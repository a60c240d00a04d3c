package io.jobq.http;

import com.fasterxml.jackson.annotation.JsonRawValue;
import io.jobq.domain.job.Job;
import java.time.Instant;

/**
 * A job as the API shows it. Field names are snake_case on the wire; timestamps are ISO-8601 UTC
 * ({@code 2025-01-31T12:00:00.123456Z}); {@code payload} and {@code result} are embedded JSON, not strings.
 *
 * @param status scheduled, queued, running, done or dead
 * @param attempts how many times the job was claimed (a lease expiry counts)
 * @param result the handler's JSON result, or null
 * @param lastError the last failure's message, or null
 * @param runAt when it became or becomes runnable, by the database clock
 * @param startedAt when the latest attempt started, or null
 * @param finishedAt when it became done, dead or cancelled, or null
 * @param idempotencyKey the key it was enqueued with, or null
 * @param cancelRequested whether cancelling was asked while it ran
 * @param priority 0-9, higher first among its tenant's jobs
 */
public record JobView(
        long id,
        String task,
        String tenant,
        String queue,
        String status,
        int attempts,
        int maxAttempts,
        @JsonRawValue String payload,
        @JsonRawValue String result,
        String lastError,
        Instant runAt,
        Instant createdAt,
        Instant startedAt,
        Instant finishedAt,
        String idempotencyKey,
        boolean cancelRequested,
        int priority) {

    public static JobView of(Job j) {
        return new JobView(j.id().value(), j.task().value(), j.tenant().value(), j.queue().value(), j.state().dbName(),
                j.attempts(), j.maxAttempts(), j.payload(), j.result().orElse(null), j.lastError().orElse(null), j.runAt(),
                j.createdAt(), j.startedAt().orElse(null), j.finishedAt().orElse(null), j.idempotencyKey().orElse(null),
                j.cancelRequested(), j.priority());
    }
}
