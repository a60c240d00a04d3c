package io.jobq.postgres;

import static io.jobq.postgres.schema.Tables.JOBS;
import static org.jooq.impl.DSL.val;

import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobState;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.tenant.TenantId;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jooq.DSLContext;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.SQLDataType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Enqueue, shared by {@link PostgresJobStore} (its statement committing on its own, or its own transaction)
 * and {@link JobClient} (the caller's transaction).
 * Each enqueue is ONE statement: runnable jobs by {@link FairTags#ENQUEUE} (charge the tenant's virtual
 * time, locking its row, insert 1..1,000 jobs, and {@code pg_notify}, which PostgreSQL delivers only on
 * commit, so a woken worker never looks for a row it cannot see yet, and a rollback sends nothing);
 * delayed jobs by {@link #INSERT_SCHEDULED}, untagged.
 */
final class Enqueuer {
    private static final Logger log = LoggerFactory.getLogger(Enqueuer.class);
    /** The NOTIFY channel; the payload is the queue name only, never the job's payload (8,000-byte cap). */
    static final String CHANNEL = "jobq_wakeup";

    /**
     * Delayed: scheduled at the database's now() + delay, no tag yet (promotion assigns one), so a
     * delayed job neither charges the tenant nor sits in the claim index. The tenant row is created if
     * missing (jobs reference it) but not locked.
     */
    private static final String INSERT_SCHEDULED = """
            WITH tenant_row AS (
                INSERT INTO jobq.tenants (queue, tenant) VALUES ({0}, {1}) ON CONFLICT DO NOTHING
            ), inserted AS (
                INSERT INTO jobq.jobs (queue, tenant, task, payload, state, vtime, run_at, max_attempts, idempotency_key, priority)
                SELECT {0}, {1}, {2}, p.payload::jsonb, 'scheduled', NULL,
                       now() + {3}::float8 * interval '1 millisecond', {4}, {5}, {7}
                FROM unnest({6}::text[]) WITH ORDINALITY AS p(payload, ord)
                ORDER BY p.ord
                ON CONFLICT (tenant, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
                RETURNING *
            )
            SELECT i.* FROM inserted i ORDER BY i.id""";

    private Enqueuer() {}

    /**
     * The tenant has a cap, so its jobs came back held: release what the cap allows (the upsert's row lock
     * is held, as {@link FairTags#RELEASE} needs) and read them again, some now queued, in the same order.
     */
    private static List<Job> releaseHeld(DSLContext tx, QueueName queue, TenantId tenant, List<Job> held) {
        TenantCaps.release(tx, queue.value(), tenant.value());
        return reread(tx, held);
    }

    /** {@code jobs} read again, in the same order. */
    private static List<Job> reread(DSLContext tx, List<Job> jobs) {
        List<Long> ids = jobs.stream().map(j -> j.id().value()).toList();
        Map<Long, Job> now = new HashMap<>();
        for (Job j : tx.selectFrom(JOBS).where(JOBS.ID.in(ids)).fetch(JobRows::toJob)) now.put(j.id().value(), j);
        return ids.stream().map(now::get).toList();
    }

    /**
     * Runs one enqueue statement on {@code tx}, which must be inside a transaction, and what its answer
     * calls for in the same transaction: held jobs released, a priority's reorder.
     *
     * @param priority 0..9; above 0, queued jobs are moved ahead of the tenant's lower-priority ones
     *     ({@link TenantPriority})
     * @return the inserted jobs in payload order; EMPTY when the idempotency key was taken (the caller
     *     must then roll back, so the tenant's charge is undone, and read the existing job)
     * @throws IllegalArgumentException if PostgreSQL refuses a payload (invalid JSON, a NUL escape, a
     *     number beyond numeric's range, or a value over one of jsonb's limits)
     */
    static List<Job> insert(DSLContext tx, TenantId tenant, QueueName queue, TaskName task, List<String> payloads,
            int maxAttempts, Duration delay, Optional<String> idempotencyKey, int priority) {
        List<Job> jobs = statement(tx, tenant, queue, task, payloads, maxAttempts, delay, idempotencyKey, priority);
        if (!delay.isZero()) return jobs;
        if (jobs.stream().anyMatch(j -> j.state() == JobState.HELD)) jobs = releaseHeld(tx, queue, tenant, jobs);
        if (priority == 0 || jobs.isEmpty()) return jobs;
        TenantPriority.reorder(tx, queue.value(), tenant.value(), priority);
        return reread(tx, jobs);
    }

    /**
     * The same enqueue as {@link #insert} with no idempotency key and priority 0, on {@code dsl} OUTSIDE any
     * transaction: its one statement commits on its own. One round trip fewer than a transaction's separate
     * COMMIT, and the tenant's row, which every enqueue of the tenant waits for, is locked for that statement
     * only, not until a COMMIT comes back. Not for a key (one taken must roll the tenant's charge back) nor a
     * priority (its reorder is a second statement). Jobs that come back held (a capped tenant, a work queue)
     * are committed held and released right after in a transaction of their own
     * ({@link TenantCaps#releaseWaiting}), and {@code holding} learns the pair, so that its next enqueues take
     * {@link #insert} instead. Should that release fail, the jobs stay held, committed, and the maintenance
     * sweep releases them: the enqueue has happened and is reported as such, never as a failure a caller
     * would retry into a duplicate.
     *
     * @return the inserted jobs in payload order, as they are after the release
     * @throws IllegalArgumentException as {@link #insert}
     */
    static List<Job> insertCommitted(DSLContext dsl, TenantId tenant, QueueName queue, TaskName task, List<String> payloads,
            int maxAttempts, Duration delay, HoldingTenants holding) {
        List<Job> jobs = statement(dsl, tenant, queue, task, payloads, maxAttempts, delay, Optional.empty(), 0);
        if (jobs.stream().noneMatch(j -> j.state() == JobState.HELD)) return jobs;
        holding.held(queue, tenant);
        // The jobs are committed: from here nothing may throw, not even an Error (the caller would report the
        // enqueue failed, and a retry would run the statement again, a duplicate).
        try {
            TenantCaps.releaseWaiting(dsl, queue.value(), tenant.value());
            return rereadOr(dsl, jobs);
        } catch (Throwable e) {
            log.atWarn().setCause(e).log("{} job(s) of tenant {} in queue {} were enqueued held; releasing them failed,"
                    + " so they wait for the maintenance sweep: {}", jobs.size(), tenant.value(), queue.value(),
                    StoreErrors.serverMessage(e));
            return jobs;
        }
    }

    /**
     * {@code jobs} read again, in the same order; one no longer there (run, finished and deleted by retention
     * meanwhile, as the statement that inserted it has committed) is answered as it was inserted.
     */
    private static List<Job> rereadOr(DSLContext dsl, List<Job> jobs) {
        List<Job> now = reread(dsl, jobs);
        List<Job> out = new ArrayList<>(jobs.size());
        for (int i = 0; i < jobs.size(); i++) out.add(now.get(i) != null ? now.get(i) : jobs.get(i));
        return out;
    }

    /**
     * The enqueue statement alone: {@link FairTags#ENQUEUE} for runnable jobs, {@link #INSERT_SCHEDULED}
     * for delayed ones, with PostgreSQL's refusals of the caller's input turned into argument errors.
     */
    private static List<Job> statement(DSLContext dsl, TenantId tenant, QueueName queue, TaskName task, List<String> payloads,
            int maxAttempts, Duration delay, Optional<String> idempotencyKey, int priority) {
        String[] texts = payloads.toArray(String[]::new);
        try {
            if (delay.isZero()) {
                return dsl.resultQuery(JobqSchema.of(dsl).sql(FairTags.ENQUEUE), queue.value(), tenant.value(), task.value(),
                                val(texts.length, SQLDataType.INTEGER), val(maxAttempts, SQLDataType.INTEGER),
                                val(idempotencyKey.orElse(null), SQLDataType.VARCHAR), texts, val(priority, SQLDataType.SMALLINT))
                        .coerce(JOBS).fetch(JobRows::toJob); // i.* lists the table's columns in order: read by position
            }
            return dsl.resultQuery(JobqSchema.of(dsl).sql(INSERT_SCHEDULED), queue.value(), tenant.value(), task.value(),
                            val(delay.toMillis(), SQLDataType.BIGINT), val(maxAttempts, SQLDataType.INTEGER),
                            val(idempotencyKey.orElse(null), SQLDataType.VARCHAR), texts, val(priority, SQLDataType.SMALLINT))
                    .coerce(JOBS).fetch(JobRows::toJob);
        } catch (DataAccessException e) {
            String state = StoreErrors.sqlState(e);
            // 22P02 invalid text representation (not JSON), 22P05 untranslatable character (\u0000 in jsonb),
            // 22021 invalid byte sequence (a NUL character; NewJob refuses those first, this is the backstop),
            // 22003 numeric value out of range (jsonb keeps numbers as numeric), 54000 program limit
            // exceeded (jsonb's size limits), 54001 statement too complex (nesting too deep for the
            // parser's stack). The payload is the caller's input: an argument error, not a store failure
            // (HTTP validates the same before it gets here).
            if ("22P02".equals(state) || "22P05".equals(state) || "22021".equals(state) || "22003".equals(state)
                    || "54000".equals(state) || "54001".equals(state)) {
                throw new IllegalArgumentException("payload is not storable JSON: " + e.getCause().getMessage(), e);
            }
            // 23514 check violation of a rule of schema V2 on the caller's input (names, the payload's size
            // and numbers). NewJob refuses all of these first; this is the backstop, naming the field all
            // the same. Any other constraint (tenants_last_vtime_finite…) is the store's fault, not the input's.
            String field = "23514".equals(state) ? inputField(StoreErrors.constraintName(e)) : null;
            if (field != null) {
                throw new IllegalArgumentException(field + " refused by the database (" + StoreErrors.constraintName(e)
                        + "): " + StoreErrors.serverMessage(e), e);
            }
            throw e;
        }
    }

    /** The request field a constraint on the caller's input guards, or null for any other constraint. */
    static String inputField(String constraint) {
        if (constraint == null) return null;
        return switch (constraint) {
            case "jobs_task_valid" -> "task";
            case "jobs_tenant_valid", "tenants_tenant_valid" -> "tenant";
            case "jobs_queue_valid", "tenants_queue_valid" -> "queue";
            case "jobs_payload_readable" -> "payload";
            default -> null;
        };
    }

    /**
     * The job a tenant already enqueued with {@code key}, if one is visible to {@code dsl}. May run inside
     * a caller's transaction, so it reads the documents guarded (a failed statement would abort it).
     */
    static Optional<Job> findByKey(DSLContext dsl, TenantId tenant, String key) {
        return dsl.select(UnreadableRows.guardedColumns(JobqSchema.of(dsl))).from(JOBS)
                .where(JOBS.TENANT.eq(tenant.value()).and(JOBS.IDEMPOTENCY_KEY.eq(key)))
                .fetchOptional(JobRows::toJobLenient);
    }
}
