package io.jobq.application.worker;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.jobq.application.port.Throwables;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.lease.FencingToken;
import io.jobq.domain.tenant.TenantId;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;

/**
 * What a {@link JobHandler} knows about the run it is executing: the job's identity, its attempt,
 * its payload, and whether the run has been cancelled.
 *
 * <p>A run is cancelled when the worker lost its lease (a heartbeat found another run owns the job,
 * or it was reaped), when the task's timeout elapsed, when the worker's shutdown grace period ran out,
 * or when someone cancelled the job ({@code POST /jobs/{id}/cancel}; the worker learns it at its next
 * heartbeat). Handlers of long jobs should check {@link #isCancelled()} between steps and stop early.
 * Timeouts, shutdown and a cancel request also interrupt the handler's thread; a lost lease only sets
 * the flag, so a handler in the middle of a side effect can finish it consistently. A cancelled run's
 * success is discarded after a lost lease, a timeout or shutdown; after a cancel request it stands (the
 * handler finished the work anyway: the job is done, its result kept), and any other end makes the job
 * cancelled, never retried.
 *
 * <p>Separately, {@link #isLeaseInJeopardy()} turns true when no heartbeat has reached the store for a
 * whole lease (a database outage): once the database is back another worker may reap the lease and run
 * the job again. The run is not cancelled for that (the lease may well be intact, and the outcome is
 * still offered to the store, whose fence decides); a handler about to perform a side effect that must
 * not happen twice can check it and fail the attempt instead.
 *
 * <p>Thread-safe. The worker creates one per run; the constructor is public so handler unit tests
 * can build one from a {@link Job} snapshot.
 */
public final class JobContext {
    private final Job job;
    private final JsonNode payload;
    private final ObjectMapper mapper;
    private final AtomicReference<String> cancelReason = new AtomicReference<>();
    private volatile String jeopardy;

    /**
     * @param job the running job (its lease gives the fencing token)
     * @param payload the job's payload parsed from {@code job.payload()}
     * @param mapper binds the payload in {@link #payloadAs}
     * @throws IllegalArgumentException if the job is not running
     */
    public JobContext(Job job, JsonNode payload, ObjectMapper mapper) {
        this.job = Objects.requireNonNull(job, "job");
        this.payload = Objects.requireNonNull(payload, "payload");
        this.mapper = Objects.requireNonNull(mapper, "mapper");
        if (job.lease().isEmpty()) throw new IllegalArgumentException("job " + job.id() + " is not running");
    }

    public JobId jobId() {
        return job.id();
    }

    public TenantId tenant() {
        return job.tenant();
    }

    public QueueName queue() {
        return job.queue();
    }

    public TaskName task() {
        return job.task();
    }

    /** This run's attempt number, 1 for the first run; a lease expiry counts as an attempt. */
    public int attempt() {
        return job.attempts();
    }

    /** The attempt after which a failure is final (1..100). */
    public int maxAttempts() {
        return job.maxAttempts();
    }

    /** Whether a retryable failure of this run would be final. */
    public boolean isLastAttempt() {
        return job.attempts() >= job.maxAttempts();
    }

    /** The token that fences this run's writes; also a good downstream idempotency key. */
    public FencingToken token() {
        return job.fencingToken();
    }

    /** The job as claimed. */
    public Job job() {
        return job;
    }

    /** The payload as a JSON tree ({@code {}} when the job was enqueued without one). */
    public JsonNode payload() {
        return payload;
    }

    /**
     * Binds the payload to {@code type}, typically a record whose compact constructor validates it.
     * With the worker's default mapper, fields {@code type} does not have are ignored, so producers can add
     * a field before the consumers that read it are deployed.
     *
     * @return never null: a JSON {@code null} payload does not bind either
     * @throws PermanentJobFailure if the payload does not bind (wrong shape, wrong type, null for a primitive,
     *     the record's constructor refusing it, JSON {@code null}): a malformed payload will never bind, so
     *     retrying is pointless
     */
    public <T> T payloadAs(Class<T> type) {
        Objects.requireNonNull(type, "type");
        if (payload.isNull() || payload.isMissingNode()) {
            // Jackson binds null to null; handlers would then fail with an NPE, which counts as retryable.
            throw new PermanentJobFailure("payload of job " + job.id() + " (task " + job.task() + ") is null; it does not bind to "
                    + type.getSimpleName());
        }
        try {
            return mapper.treeToValue(payload, type);
        } catch (JacksonException | IllegalArgumentException e) {
            throw new PermanentJobFailure("payload of job " + job.id() + " (task " + job.task()
                    + ") does not bind to " + type.getSimpleName() + ": " + rootMessage(e), e);
        }
    }

    /** Whether this run has been cancelled (lease lost, timed out, or shutdown grace elapsed). */
    public boolean isCancelled() {
        return cancelReason.get() != null;
    }

    /**
     * Whether this run's lease may have lapsed: no heartbeat reached the store within a whole lease, so
     * another worker may run the job again once the store is back. Not a cancellation; see the class
     * comment.
     */
    public boolean isLeaseInJeopardy() {
        return jeopardy != null;
    }

    /** Why the lease is in jeopardy, once it is. */
    public Optional<String> leaseJeopardyReason() {
        return Optional.ofNullable(jeopardy);
    }

    /** Marks the lease in jeopardy (the worker's heartbeat and lease check do this). */
    void markLeaseInJeopardy(String reason) {
        jeopardy = Objects.requireNonNull(reason, "reason");
    }

    /** Why the run was cancelled, once it has been. */
    public Optional<String> cancellationReason() {
        return Optional.ofNullable(cancelReason.get());
    }

    /**
     * Marks the run cancelled; the first reason wins.
     *
     * @return whether this call cancelled it (false if it already was)
     */
    boolean cancel(String reason) {
        return cancelReason.compareAndSet(null, Objects.requireNonNull(reason, "reason"));
    }

    /** The most specific message, plus the JSON path of the offending field when Jackson knows it. */
    private static String rootMessage(Throwable e) {
        Throwable root = Throwables.rootCause(e);
        String message = root instanceof JacksonException je ? je.getOriginalMessage() : root.getMessage();
        if (message == null) message = root.getClass().getSimpleName();
        if (e instanceof JsonMappingException jme && !jme.getPath().isEmpty()) {
            String path = jme.getPath().stream()
                    .map(ref -> ref.getFieldName() != null ? ref.getFieldName() : "[" + ref.getIndex() + "]")
                    .collect(Collectors.joining("."));
            message += " (at " + path + ")";
        }
        return message;
    }
}
