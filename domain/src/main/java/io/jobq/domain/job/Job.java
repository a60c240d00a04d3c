package io.jobq.domain.job;

import io.jobq.domain.lease.FencingToken;
import io.jobq.domain.lease.Lease;
import io.jobq.domain.lease.WorkerId;
import io.jobq.domain.tenant.TenantId;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalDouble;

/**
 * A snapshot of one job as stored. Immutable; every change goes through the store.
 *
 * @param payload the job's input as JSON text (any JSON value; {@code {}} when none was given)
 * @param result the handler's JSON result, once done and if it returned one
 * @param vtime the fair-queueing start tag; present while queued (and kept afterwards for audit)
 * @param runAt when a scheduled job becomes due, by the database clock
 * @param attempts how many times the job has been claimed (a lease expiry counts); 0 until the first claim
 * @param maxAttempts the attempt after which a failure is final; 1..100
 * @param lease owner and expiry; present exactly while running
 * @param lastError the last failure's message, sanitised and bounded by the store
 * @param idempotencyKey the tenant-scoped key the job was enqueued with, if any
 * @param cancelRequested whether cancelling was asked while the job ran: its handler is told, and a run
 *     that ends other than in success makes it cancelled instead of retried
 * @param priority 0..{@value JobLimits#MAX_PRIORITY}, higher first among its tenant's own jobs (never against
 *     other tenants': start tags decide whose turn it is)
 */
public record Job(
        JobId id,
        TenantId tenant,
        QueueName queue,
        TaskName task,
        String payload,
        Optional<String> result,
        JobState state,
        OptionalDouble vtime,
        Instant runAt,
        int attempts,
        int maxAttempts,
        Optional<Lease> lease,
        Optional<String> lastError,
        Optional<String> idempotencyKey,
        Instant createdAt,
        Optional<Instant> startedAt,
        Optional<Instant> finishedAt,
        boolean cancelRequested,
        int priority) {

    /** Default for {@code maxAttempts} when a request gives none. */
    public static final int DEFAULT_MAX_ATTEMPTS = 5;
    /** Largest accepted {@code maxAttempts}. */
    public static final int MAX_MAX_ATTEMPTS = 100;
    /**
     * Largest accepted payload: 1 MiB (1,048,576 bytes) of JSON text in UTF-8, the API's default body
     * limit, whatever door the job comes through (HTTP with a larger body limit, the Java client). The
     * database refuses what could never have passed this (see {@code adapters-postgres} migration V2).
     */
    public static final int MAX_PAYLOAD_BYTES = 1 << 20;

    /** @throws IllegalArgumentException if the snapshot breaks an invariant the schema also checks */
    public Job {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(tenant, "tenant");
        Objects.requireNonNull(queue, "queue");
        Objects.requireNonNull(task, "task");
        Objects.requireNonNull(payload, "payload");
        Objects.requireNonNull(result, "result");
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(vtime, "vtime");
        Objects.requireNonNull(runAt, "runAt");
        Objects.requireNonNull(lease, "lease");
        Objects.requireNonNull(lastError, "lastError");
        Objects.requireNonNull(idempotencyKey, "idempotencyKey");
        Objects.requireNonNull(createdAt, "createdAt");
        Objects.requireNonNull(startedAt, "startedAt");
        Objects.requireNonNull(finishedAt, "finishedAt");
        if (attempts < 0) throw new IllegalArgumentException("attempts must be >= 0, was " + attempts);
        if (maxAttempts < 1) throw new IllegalArgumentException("maxAttempts must be >= 1, was " + maxAttempts);
        JobLimits.requirePriority(priority);
        if ((state == JobState.RUNNING) != lease.isPresent()) {
            throw new IllegalArgumentException("a job has a lease exactly while running; state " + state.dbName()
                    + (lease.isPresent() ? " with" : " without") + " a lease");
        }
    }

    /**
     * The token of the run in progress: (id, lease owner, attempts).
     *
     * @throws IllegalStateException if the job is not running
     */
    public FencingToken fencingToken() {
        Lease l = lease.orElseThrow(() -> new IllegalStateException("job " + id + " is " + state.dbName() + ", not running"));
        return new FencingToken(id, l.owner(), attempts);
    }

    /** The worker holding the lease, if running. */
    public Optional<WorkerId> lockedBy() {
        return lease.map(Lease::owner);
    }
}
