package io.jobq.postgres;

import io.jobq.application.port.CancelResult;
import io.jobq.application.port.EnqueueResult;
import io.jobq.application.port.JobQueueException;
import io.jobq.application.port.NewJob;
import io.jobq.application.port.NewJobBatch;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobId;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.jooq.DSLContext;

/**
 * Enqueues jobs inside the caller's own transaction, so a job exists if and only if the caller's
 * business change commits (the transactional outbox, without the outbox):
 *
 * <pre>{@code
 * try (Connection c = dataSource.getConnection()) {
 *     c.setAutoCommit(false);
 *     insertOrder(c, order);                                   // your own write
 *     jobClient.enqueue(c, NewJob.of(tenant, QueueName.DEFAULT, TaskName.of("send_receipt"), json));
 *     c.commit();                                              // job visible, workers woken
 * }                                                            // rollback: no job, no wake-up, no vtime charged
 * }</pre>
 *
 * <p>Commit makes the job visible and delivers the wake-up (PostgreSQL sends NOTIFY on commit only);
 * rollback leaves no job, no notification and no virtual-time charge. With an idempotency key the
 * insert runs under a savepoint: a repeated key rolls back to it (undoing the tenant's charge, keeping
 * the caller's other work) and returns the existing job. At READ COMMITTED, a competing enqueue of the
 * same key that has not committed yet makes this call wait for its outcome. At REPEATABLE READ or
 * SERIALIZABLE, a competitor's committed row the caller's snapshot cannot see raises
 * {@link ConcurrentUpdateException}: retry the caller's transaction.
 *
 * <p>The enqueue charges the tenant's fair tag on its row in {@code jobq.tenants}, and that row stays locked
 * until the caller's transaction ends: other enqueues of the same tenant and queue wait for it meanwhile
 * (promotion and schedule firing wait up to 100 ms, then pass the tenant by until later). Enqueue late in the
 * transaction, just before the commit, rather than before slow work.
 *
 * <p>Every statement names jobq's {@link JobqSchema}; the caller's {@code search_path} is neither read nor
 * changed, so the application's own tables called {@code jobs} or {@code tenants} are never touched.
 *
 * <p>Immutable and thread-safe; it holds no connection.
 */
public final class JobClient {
    private final JobqSchema schema;

    /** A client for jobq's tables in the default schema {@code jobq}. */
    public JobClient() {
        this(JobqSchema.DEFAULT);
    }

    /** A client for jobq's tables in {@code schema} (the one {@link Migrations} migrated). */
    public JobClient(JobqSchema schema) {
        this.schema = Objects.requireNonNull(schema, "schema");
    }

    /**
     * Enqueues one job on {@code connection} within its current transaction; never commits or rolls
     * back the caller's work. On a connection in auto-commit mode the enqueue is its own transaction.
     *
     * @return {@link EnqueueResult.Created}, or {@link EnqueueResult.Existing} for a key the tenant already used
     * @throws ConcurrentUpdateException at REPEATABLE READ or above when a competitor committed the same key
     * @throws io.jobq.application.port.StoreUnavailableException if the connection is broken
     * @throws IllegalArgumentException if PostgreSQL refuses the payload
     */
    public EnqueueResult enqueue(Connection connection, NewJob job) {
        Objects.requireNonNull(connection, "connection");
        Objects.requireNonNull(job, "job");
        return inTransaction(connection, "enqueue", () -> {
            DSLContext tx = schema.dsl(connection);
            Savepoint savepoint = job.idempotencyKey().isPresent() ? connection.setSavepoint() : null;
            List<Job> rows = Enqueuer.insert(tx, job.tenant(), job.queue(), job.task(), List.of(job.payload()),
                    job.maxAttempts(), job.delay(), job.idempotencyKey(), job.priority());
            if (!rows.isEmpty()) {
                if (savepoint != null) connection.releaseSavepoint(savepoint);
                return new EnqueueResult.Created(rows.getFirst());
            }
            // The key is taken: undo this insert's tenant charge, keep the caller's other work.
            connection.rollback(savepoint);
            Optional<Job> existing = Enqueuer.findByKey(tx, job.tenant(), job.idempotencyKey().orElseThrow());
            return new EnqueueResult.Existing(existing.orElseThrow(() -> new ConcurrentUpdateException("enqueue",
                    new IllegalStateException("idempotency key " + job.idempotencyKey().get()
                            + " is taken by a row this transaction's snapshot cannot see"))));
        });
    }

    /**
     * Enqueues one job through the caller's jOOQ context, on the connection its transaction uses (for a
     * context inside {@code transactionResult}, or one whose connection provider joins a Spring-managed
     * transaction). Same contract as {@link #enqueue(Connection, NewJob)}.
     */
    public EnqueueResult enqueue(DSLContext dsl, NewJob job) {
        return dsl.connectionResult(c -> enqueue(c, job));
    }

    /** As {@link #enqueue(DSLContext, NewJob)}, for the {@code Configuration} jOOQ hands a transactional lambda. */
    public EnqueueResult enqueue(org.jooq.Configuration configuration, NewJob job) {
        return enqueue(configuration.dsl(), job);
    }

    /**
     * Enqueues 1..1,000 jobs of one tenant in one INSERT within the caller's transaction.
     *
     * @return the new ids in payload order
     */
    public List<JobId> enqueueBatch(Connection connection, NewJobBatch batch) {
        Objects.requireNonNull(connection, "connection");
        Objects.requireNonNull(batch, "batch");
        return inTransaction(connection, "enqueue batch", () -> {
            DSLContext tx = schema.dsl(connection);
            return Enqueuer.insert(tx, batch.tenant(), batch.queue(), batch.task(), batch.payloads(), batch.maxAttempts(),
                    batch.delay(), Optional.empty(), batch.priority()).stream().map(Job::id).toList();
        });
    }

    /** Enqueues a batch through a jOOQ context bound to the caller's transaction. */
    public List<JobId> enqueueBatch(DSLContext dsl, NewJobBatch batch) {
        return dsl.connectionResult(c -> enqueueBatch(c, batch));
    }

    /** Enqueues a batch through the {@code Configuration} of the caller's jOOQ transaction. */
    public List<JobId> enqueueBatch(org.jooq.Configuration configuration, NewJobBatch batch) {
        return enqueueBatch(configuration.dsl(), batch);
    }

    /**
     * Cancels a job within the caller's transaction, as {@link PostgresJobStore#cancel} does in its own:
     * a scheduled, queued or held job becomes {@code cancelled}; a running one gets {@code cancel_requested}
     * (its worker tells the handler at its next heartbeat). The job's row stays locked until the caller's
     * transaction ends, so a claim skips it meanwhile (and so do priority reorders and releases, which never
     * wait for it); a rollback undoes the cancel. The cap or work-window slot a queued job frees is handed on
     * by the next maintenance pass (about a second), not at commit, which this client does not see. At
     * REPEATABLE READ or SERIALIZABLE, a job changed since the caller's snapshot (claimed, say) raises
     * {@link ConcurrentUpdateException}: retry the caller's transaction.
     *
     * @return {@link CancelResult.Cancelled}, {@link CancelResult.Requested}, {@link CancelResult.Finished}
     *     (done or dead: nothing changed) or {@link CancelResult.NotFound}
     * @throws ConcurrentUpdateException at REPEATABLE READ or above, as above
     * @throws io.jobq.application.port.StoreUnavailableException if the connection is broken
     */
    public CancelResult cancel(Connection connection, JobId id) {
        Objects.requireNonNull(connection, "connection");
        Objects.requireNonNull(id, "id");
        return inTransaction(connection, "cancel", () -> Cancellations.cancelIn(schema.dsl(connection), id,
                new TenantCaps.EndedRuns()));
    }

    /** As {@link #cancel(Connection, JobId)}, on the connection of the caller's jOOQ transaction. */
    public CancelResult cancel(DSLContext dsl, JobId id) {
        return dsl.connectionResult(c -> cancel(c, id));
    }

    private interface SqlWork<T> {
        T run() throws SQLException;
    }

    private static <T> T inTransaction(Connection connection, String operation, SqlWork<T> work) {
        try {
            boolean autoCommit = connection.getAutoCommit();
            if (!autoCommit) return work.run();
            // No caller transaction: make one, so the idempotency savepoint and the charge are atomic.
            connection.setAutoCommit(false);
            try {
                T result = work.run();
                connection.commit();
                return result;
            } catch (SQLException | RuntimeException e) {
                connection.rollback();
                throw e;
            } finally {
                connection.setAutoCommit(true);
            }
        } catch (SQLException e) {
            throw StoreErrors.translate(operation, new org.jooq.exception.DataAccessException(e.getMessage(), e));
        } catch (RuntimeException e) {
            throw StoreErrors.translate(operation, e);
        }
    }
}
