package io.jobq.postgres;

import static io.jobq.postgres.schema.Tables.JOBS;
import static io.jobq.postgres.schema.Tables.QUEUES;

import static org.jooq.impl.DSL.val;

import io.jobq.application.port.ApiKeyStore.ApiKey;
import io.jobq.application.port.Backlog;
import io.jobq.application.port.FinishedCount;
import io.jobq.application.port.TenantActivity;
import io.jobq.application.port.CancelResult;
import io.jobq.application.port.ClaimRequest;
import io.jobq.application.port.EnqueueResult;
import io.jobq.application.port.ExpiredLeaseDecider;
import io.jobq.application.port.FencedWrite;
import io.jobq.application.port.JobQuery;
import io.jobq.application.port.JobSummary;
import io.jobq.application.port.JobStore;
import io.jobq.application.port.NewJob;
import io.jobq.application.port.NewJobBatch;
import io.jobq.application.port.OutcomeWrite;
import io.jobq.application.port.OutcomesThenClaim;
import io.jobq.application.port.RetryResult;
import io.jobq.application.port.JobQueueException;
import io.jobq.application.port.Schedule;
import io.jobq.application.port.ScheduleDefinition;
import io.jobq.application.port.QueueSettings;
import io.jobq.application.port.QueueUpdate;
import io.jobq.application.port.Retention;
import io.jobq.application.port.StoreConflictException;
import io.jobq.application.port.StoreUnavailableException;
import io.jobq.application.port.TenantSettings;
import io.jobq.application.port.TenantUpdate;
import io.jobq.application.port.CapUsage;
import io.jobq.application.port.VacuumHealth;
import io.jobq.application.port.WorkerInfo;
import io.jobq.domain.fairness.Fairness;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.JobState;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.lease.FencingToken;
import io.jobq.domain.lease.WorkerId;
import io.jobq.domain.retry.RetryDecision;
import io.jobq.domain.schedule.ScheduleName;
import io.jobq.domain.tenant.TenantId;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Record;
import org.jooq.Result;
import org.jooq.ResultQuery;
import org.jooq.conf.SettingsTools;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link JobStore} on PostgreSQL. Each method is one short transaction on a pooled connection;
 * no transaction or row lock is held while a handler runs (a claim commits at once and leaves a lease).
 * Every time that decides a job's fate comes from the database's {@code now()}.
 *
 * <p>Thread-safe; share one instance per pool.
 */
public final class PostgresJobStore implements JobStore {
    private static final Logger log = LoggerFactory.getLogger(PostgresJobStore.class);

    /**
     * How the store claims and cleans up. (Retry timing is not the store's: it writes the decisions the
     * worker's {@link io.jobq.domain.retry.RetryPolicy} makes.)
     *
     * @param claimOrder which queued job goes first. Default: {@link ClaimOrder#FAIR}.
     * @param lockMode how a claim treats rows another claimer locked. Default: {@link LockMode#SKIP_LOCKED}.
     * @param selfVacuumInterval how often at most {@link #vacuumIfNeeded()} checks whether a jobq table that
     *     autovacuum leaves alone needs a VACUUM (and runs it, unless any worker vacuumed that table within
     *     this interval, by the server's statistics); positive, or empty to never vacuum (the
     *     warning that autovacuum is off is logged all the same). Default: 1 min, autovacuum's own naptime.
     * @param schema the schema holding jobq's tables (migrated there by {@link Migrations}). Default:
     *     {@link JobqSchema#DEFAULT}.
     * @param readTimeout the longest each statement of a read for people (listings, counts, the dashboard's
     *     aggregates) may run before it is cancelled (JDBC's query timeout, and for a listing's cursor the
     *     server's statement_timeout per fetch: whole seconds, at least 1): a slow read on a huge
     *     table then answers {@link StoreUnavailableException} (HTTP 503) instead of holding a pooled
     *     connection that enqueues need. The queue's own statements (claim, outcomes, upkeep) have none.
     *     Default: 30 s.
     * @param writeTimeout the same for each statement of a write on a caller's behalf ({@link #enqueue},
     *     {@link #enqueueBatch}, {@link #cancel}, {@link #retryDead}, {@link #configureTenant},
     *     {@link #putSchedule}, {@link #deleteSchedule}; whole seconds, at least 1): a write that waits longer,
     *     typically for a tenant's row that an application's open transaction holds through {@link JobClient},
     *     or behind a migration's lock, is cancelled, changes nothing, and answers
     *     {@link StoreUnavailableException} (HTTP 503, Retry-After), so that waiting requests of one tenant
     *     cannot take every pooled connection. {@link JobClient} runs on the caller's connection and is not
     *     bounded by it. Keep it below the connections' {@code socketTimeout} ({@link PostgresPool}: 60 s):
     *     a connection the driver drops first leaves the server to finish the statement, and an enqueue
     *     committing alone may then have happened though the call failed. Default: 10 s.
     */
    public record Options(ClaimOrder claimOrder, LockMode lockMode, Optional<Duration> selfVacuumInterval, JobqSchema schema,
            Duration readTimeout, Duration writeTimeout) {
        public static final Duration DEFAULT_READ_TIMEOUT = Duration.ofSeconds(30);
        public static final Duration DEFAULT_WRITE_TIMEOUT = Duration.ofSeconds(10);
        public static final Options DEFAULTS = new Options(ClaimOrder.FAIR, LockMode.SKIP_LOCKED,
                Optional.of(Duration.ofMinutes(1)), JobqSchema.DEFAULT, DEFAULT_READ_TIMEOUT, DEFAULT_WRITE_TIMEOUT);

        public Options {
            Objects.requireNonNull(claimOrder, "claimOrder");
            Objects.requireNonNull(lockMode, "lockMode");
            Objects.requireNonNull(selfVacuumInterval, "selfVacuumInterval");
            Objects.requireNonNull(schema, "schema");
            Objects.requireNonNull(readTimeout, "readTimeout");
            Objects.requireNonNull(writeTimeout, "writeTimeout");
            selfVacuumInterval.ifPresent(i -> {
                if (!i.isPositive()) throw new IllegalArgumentException("selfVacuumInterval must be positive, was " + i);
            });
            requireQueryTimeout("readTimeout", readTimeout);
            requireQueryTimeout("writeTimeout", writeTimeout);
        }

        /** The first four settings, with the default timeouts. */
        public Options(ClaimOrder claimOrder, LockMode lockMode, Optional<Duration> selfVacuumInterval, JobqSchema schema) {
            this(claimOrder, lockMode, selfVacuumInterval, schema, DEFAULT_READ_TIMEOUT);
        }

        /** The first five settings, with the default write timeout. */
        public Options(ClaimOrder claimOrder, LockMode lockMode, Optional<Duration> selfVacuumInterval, JobqSchema schema,
                Duration readTimeout) {
            this(claimOrder, lockMode, selfVacuumInterval, schema, readTimeout, DEFAULT_WRITE_TIMEOUT);
        }

        private static void requireQueryTimeout(String name, Duration timeout) {
            if (timeout.toSeconds() < 1 || timeout.toNanosPart() != 0 || timeout.toSeconds() > Integer.MAX_VALUE) {
                throw new IllegalArgumentException(name + " must be whole seconds from 1 s (JDBC's query timeout), was " + timeout);
            }
        }

        public Options withClaimOrder(ClaimOrder order) {
            return new Options(order, lockMode, selfVacuumInterval, schema, readTimeout, writeTimeout);
        }

        public Options withLockMode(LockMode mode) {
            return new Options(claimOrder, mode, selfVacuumInterval, schema, readTimeout, writeTimeout);
        }

        public Options withSelfVacuumInterval(Duration interval) {
            return new Options(claimOrder, lockMode, Optional.of(interval), schema, readTimeout, writeTimeout);
        }

        /** A copy whose store never runs VACUUM itself. */
        public Options withoutSelfVacuum() {
            return new Options(claimOrder, lockMode, Optional.empty(), schema, readTimeout, writeTimeout);
        }

        /** A copy working in {@code schema}. */
        public Options withSchema(JobqSchema schema) {
            return new Options(claimOrder, lockMode, selfVacuumInterval, schema, readTimeout, writeTimeout);
        }

        /** A copy whose reads for people are cancelled after {@code timeout} (whole seconds, at least 1). */
        public Options withReadTimeout(Duration timeout) {
            return new Options(claimOrder, lockMode, selfVacuumInterval, schema, timeout, writeTimeout);
        }

        /** A copy whose writes on a caller's behalf are cancelled after {@code timeout} (whole seconds, at least 1). */
        public Options withWriteTimeout(Duration timeout) {
            return new Options(claimOrder, lockMode, selfVacuumInterval, schema, readTimeout, timeout);
        }
    }

    /** Most times an idempotent enqueue re-reads after losing a race to a competitor that then rolled back. */
    private static final int IDEMPOTENCY_ROUNDS = 5;

    private final DSLContext dsl;
    /** {@link #dsl} with the driver's query timeout set to {@link Options#readTimeout}: for the reads for people. */
    private final DSLContext reads;
    /** {@link #dsl} with the driver's query timeout set to {@link Options#writeTimeout}: for the writes for callers. */
    private final DSLContext writes;
    /** Promotion of due jobs, which remembers the tenants it recently passed by. */
    private final DuePromotion promotion = new DuePromotion();
    /** The tenants whose enqueues came back held lately: theirs take one transaction ({@link #committedAlone}). */
    private final HoldingTenants holding = new HoldingTenants();
    /** The jobs whose outcome found their row held lately ({@link #recordOutcomesThenClaim}). */
    private final HeldOutcomeRows heldOutcomes = new HeldOutcomeRows();
    /** How long the claim loop's outcomes wait for a held row, in ms: {@link LockWait#MAX_MS}; tests lengthen it. */
    private volatile int outcomeLockWaitMs = LockWait.MAX_MS;
    private final JobqSchema schema;
    private final Options options;
    private final SelfVacuum selfVacuum;
    /**
     * The claim returning every column, and outcomes then a claim ({@link #recordOutcomesThenClaim}), each
     * rendered once per shape: one queue or several, and the claim's limit (see {@link #CLAIM_PICK}).
     */
    private final Map<ClaimShape, RenderedStatement> rendered = new ConcurrentHashMap<>();

    /** What a rendered claim statement depends on besides the store's options. */
    private record ClaimShape(boolean severalQueues, int limit, boolean outcomesFirst, boolean oneOutcome, boolean skipHeld,
            int lockWaitMs) {}

    public PostgresJobStore(DataSource dataSource, Options options) {
        this.options = Objects.requireNonNull(options, "options");
        this.schema = options.schema();
        this.dsl = schema.dsl(Objects.requireNonNull(dataSource, "dataSource"));
        this.reads = timed(dsl, options.readTimeout());
        this.writes = timed(dsl, options.writeTimeout());
        this.selfVacuum = new SelfVacuum(options.selfVacuumInterval());
    }

    public PostgresJobStore(DataSource dataSource) {
        this(dataSource, Options.DEFAULTS);
    }

    /** {@code dsl} with the driver's query timeout set to {@code timeout}; derive copies the data, so it still knows jobq's schema. */
    private static DSLContext timed(DSLContext dsl, Duration timeout) {
        return dsl.configuration().derive(SettingsTools.clone(dsl.settings()).withQueryTimeout((int) timeout.toSeconds())).dsl();
    }

    public Options options() {
        return options;
    }

    // ---------------------------------------------------------------- enqueue

    @Override
    public EnqueueResult enqueue(NewJob job) {
        if (committedAlone(job.idempotencyKey(), job.priority(), job.queue(), job.tenant())) {
            return write("enqueue", ctx -> new EnqueueResult.Created(Enqueuer.insertCommitted(ctx, job.tenant(), job.queue(),
                    job.task(), List.of(job.payload()), job.maxAttempts(), job.delay(), holding).getFirst()));
        }
        return write("enqueue", ctx -> {
            for (int round = 0; round < IDEMPOTENCY_ROUNDS; round++) {
                Optional<Job> created = insertOrRollBack(ctx, job);
                if (created.isPresent()) return new EnqueueResult.Created(created.get());
                // The key is taken. ON CONFLICT waited for the competitor to commit, so its row is
                // visible now, unless it was deleted meanwhile: then try the insert again.
                Optional<Job> existing = Enqueuer.findByKey(ctx, job.tenant(), job.idempotencyKey().orElseThrow());
                if (existing.isPresent()) return new EnqueueResult.Existing(existing.get());
            }
            // Transient, and nothing was written: the same answer as a conflict abort (HTTP 503, Retry-After).
            throw new StoreConflictException("enqueue (its idempotency key raced " + IDEMPOTENCY_ROUNDS + " times)", null);
        });
    }

    /**
     * Whether an enqueue may be its statement alone, committing on its own ({@link Enqueuer#insertCommitted}):
     * no key, priority 0, and no enqueue of this tenant in this queue came back held lately ({@link #holding}).
     */
    private boolean committedAlone(Optional<String> idempotencyKey, int priority, QueueName queue, TenantId tenant) {
        return idempotencyKey.isEmpty() && priority == 0 && !holding.mayHold(queue, tenant);
    }

    /** The created job, or empty after rolling back when the idempotency key was taken. */
    private static Optional<Job> insertOrRollBack(DSLContext ctx, NewJob job) {
        try {
            return Optional.of(ctx.transactionResult(cfg -> {
                List<Job> rows = Enqueuer.insert(cfg.dsl(), job.tenant(), job.queue(), job.task(), List.of(job.payload()),
                        job.maxAttempts(), job.delay(), job.idempotencyKey(), job.priority());
                // Roll back the whole transaction so the tenant is not charged for a job never created.
                if (rows.isEmpty()) throw new KeyTaken();
                return rows.getFirst();
            }));
        } catch (KeyTaken e) {
            return Optional.empty();
        }
    }

    /** Control flow only: makes jOOQ roll back the enqueue transaction. */
    private static final class KeyTaken extends RuntimeException {
        private static final long serialVersionUID = 1L;

        KeyTaken() {
            super(null, null, false, false);
        }
    }

    @Override
    public List<JobId> enqueueBatch(NewJobBatch batch) {
        if (committedAlone(Optional.empty(), batch.priority(), batch.queue(), batch.tenant())) {
            return write("enqueue batch", ctx -> Enqueuer.insertCommitted(ctx, batch.tenant(), batch.queue(), batch.task(),
                    batch.payloads(), batch.maxAttempts(), batch.delay(), holding).stream().map(Job::id).toList());
        }
        return write("enqueue batch", ctx -> ctx.transactionResult(cfg -> Enqueuer.insert(cfg.dsl(), batch.tenant(),
                        batch.queue(), batch.task(), batch.payloads(), batch.maxAttempts(), batch.delay(), Optional.empty(),
                        batch.priority()))
                .stream().map(Job::id).toList());
    }

    // ---------------------------------------------------------------- claim

    /**
     * One statement. The CTE picks the lowest (vtime, id) queued rows, riding jobs_runnable, and locks
     * them; SKIP LOCKED passes over rows a concurrent claimer holds instead of queueing behind them.
     * MATERIALIZED keeps the planner from inlining the CTE into the UPDATE, where LIMIT and the row
     * locks would no longer apply to one pick. The UPDATE re-checks nothing: the locked rows are
     * queued by construction (FOR UPDATE re-evaluates the WHERE on the newest row version).
     * The last %s is what the statement returns: every column ({@code j.*}) on the normal path.
     *
     * <p>The limit is written into the text, not bound: with {@code LIMIT $1} PostgreSQL's generic plan must
     * guess the pick's size (a tenth of the table), comes out far costlier than any custom plan, and so the
     * claim was planned afresh on every execution (0.35–0.4 ms of planning against 0.2 ms of execution for
     * outcomes-then-claim, measured with {@code EXPLAIN (ANALYZE, SUMMARY)}). With the limit in the text the
     * sixth execution on a connection switches to the cached generic plan. A worker uses the limits 1 to
     * min(claim batch, slots + prefetch), mostly the largest (claims wait briefly to come back full), each one
     * prepared statement per connection; pgjdbc keeps 256 per connection and re-prepares one it evicted.
     */
    private static final String CLAIM_PICK = """
            picked AS MATERIALIZED (
                SELECT id FROM jobq.jobs
                WHERE state = 'queued' AND %s
                ORDER BY %s
                LIMIT %d
                FOR UPDATE%s
            )""";
    private static final String CLAIM_UPDATE = """
            UPDATE jobq.jobs j
            SET state = 'running', attempts = j.attempts + 1, locked_by = {0},
                locked_until = now() + {1}::float8 * interval '1 millisecond', started_at = now()
            FROM picked WHERE j.id = picked.id
            RETURNING %s""";
    private static final String CLAIM = "WITH " + CLAIM_PICK + "\n" + CLAIM_UPDATE;

    /**
     * One statement on the normal path, with no extra round trip. A claimed row the domain refuses (a
     * task named {@code bad task}) is quarantined (dead, {@code last_error} says why) in a second,
     * fenced statement, and the others are returned. When the claim statement itself fails because
     * PostgreSQL cannot print a row (a payload over 1 GB as text), it changed nothing, and the claim is
     * made again without printing, then read row by row: see {@link #claimRowByRow}.
     */
    @Override
    public List<Job> claim(ClaimRequest req) {
        List<JobRow> rows;
        try {
            // Rendered once; read as the table's columns (RETURNING j.* lists them in table order), by position.
            RenderedStatement claim = rendered(req, 0, false);
            rows = run("claim", () -> claim.fetch(dsl, claimBinds(req)));
        } catch (RuntimeException e) {
            if (!UnreadableRows.isUnprintableValue(e)) throw e;
            log.atWarn().addKeyValue("worker", req.worker().value()).log("claim failed on a value PostgreSQL cannot"
                    + " print ({}); claiming row by row so only that row is lost", StoreErrors.serverMessage(e));
            return claimRowByRow(req);
        }
        return claimed(req, rows);
    }

    /** The claimed rows as jobs in claim order; a row the domain refuses is quarantined instead. */
    private List<Job> claimed(ClaimRequest req, List<JobRow> rows) {
        List<Job> jobs = new ArrayList<>(rows.size());
        List<UnreadableRows.Quarantined> refused = new ArrayList<>();
        for (JobRow r : rows) {
            mapClaimed(r, jobs, refused);
        }
        quarantine(req, refused);
        return inClaimOrder(jobs);
    }

    /** Only with {@link LockMode#SKIP_LOCKED}: see {@link #recordOutcomesThenClaim}. */
    @Override
    public boolean claimsCarryOutcomes() {
        return options.lockMode() == LockMode.SKIP_LOCKED;
    }

    /**
     * Sets how long the claim loop's outcomes wait for a held row ({@link #recordOutcomesThenClaim}), for a test
     * that must see a wait end in a write whatever the machine's load; {@link LockWait#MAX_MS} otherwise.
     */
    PostgresJobStore withOutcomeLockWait(Duration wait) {
        outcomeLockWaitMs = Math.toIntExact(wait.toMillis());
        return this;
    }

    /**
     * One transaction, one commit, on the normal path: the outcome statement, then the claim
     * ({@link OutcomeStatement#thenClaimTemplate}), in one text with the lock-wait bound before them and the
     * {@code COMMIT} after them (three round trips on a warm connection, where four had been; see
     * {@link RenderedStatement#fetchEach}). The answers are made once that has committed. When that fails on a value (a result the database refuses, a
     * claimed row it cannot print) it changed nothing, and the outcomes and the claim are made on their own, each
     * with its fallback.
     *
     * <p>Each lock wait of the transaction lasts at most {@link LockWait#MAX_MS} ms: concurrent claims keep
     * rows they re-checked and found claimed locked until they commit, so an ending run's row is held for a
     * moment all the time under busy workers, and waiting that moment is cheaper than writing the outcome again
     * (at 16 single-slot workers on the bench machine, skipping at once cost about a fifth of the per-job and of
     * the 10-per-claim throughput). A wait that runs out rolls the transaction back, and the same call is made
     * again skipping held rows ({@link HeldOutcomeRows}): the held write is answered {@link FencedWrite.Held},
     * the others written, the claim made.
     *
     * <p>Two statements, outcomes first, under {@link LockMode#WAIT}: there the claim may wait on a queued
     * row's lock (another claimer's, an application transaction's), and in one transaction it would wait while
     * holding the ending runs' row locks, which the worker's heartbeat and the caps' release need.
     */
    @Override
    public OutcomesThenClaim recordOutcomesThenClaim(List<OutcomeWrite> writes, ClaimRequest req) {
        Objects.requireNonNull(writes, "writes");
        Objects.requireNonNull(req, "req");
        OutcomeWrite.requireDistinctJobs(writes);
        if (writes.isEmpty()) return new OutcomesThenClaim(List.of(), claim(req));
        if (options.lockMode() != LockMode.SKIP_LOCKED) return new OutcomesThenClaim(recordOutcomes(writes), claim(req));
        OutcomesThenClaim both = outcomesThenClaim(writes, req, heldOutcomes.anyAmong(writes), false);
        return both != null ? both : outcomesThenClaim(writes, req, true, true);
    }

    /**
     * {@link #recordOutcomesThenClaim} in one transaction, skipping held rows or waiting for them under
     * {@link LockWait}; null when the wait ran out (nothing changed).
     *
     * @param afterRunOut whether a wait of this same call ran out: only then are the writes answered held
     *     remembered (see {@link HeldOutcomeRows#update})
     */
    private OutcomesThenClaim outcomesThenClaim(List<OutcomeWrite> writes, ClaimRequest req, boolean skipHeld, boolean afterRunOut) {
        TenantCaps.EndedRuns ended = new TenantCaps.EndedRuns();
        // Rendered for exactly these writes: the form for one outcome reads only the first of each bind array.
        RenderedStatement statement = rendered(req, writes.size(), skipHeld);
        Object ranOut = new Object(), refused = new Object(); // what the call ended in, when no rows
        Object written = run("record outcomes and claim", () -> {
            ended.clear();
            try {
                // In a transaction of its own: pgjdbc may send a Sync between the text's statements (see
                // RenderedStatement.fetchEach), which in auto-commit would commit the outcomes alone. The text
                // itself bounds the lock waits and commits (see rendered).
                return dsl.transactionResult(cfg -> OutcomeStatement.writeThenClaim(cfg.dsl(), statement, writes, claimBinds(req), ended));
            } catch (RuntimeException e) {
                if (OutcomeStatement.refusedAValue(e) || UnreadableRows.isUnprintableValue(e)) return refused;
                // A deadlock too (a server whose deadlock_timeout is below the lock wait): skipping cannot wait.
                if (!skipHeld && (LockWait.ranOut(e) || StoreErrors.DEADLOCK_DETECTED.equals(StoreErrors.sqlState(e)))) {
                    return ranOut;
                }
                throw e;
            }
        });
        if (written == ranOut) return null;
        if (written == refused) {
            log.atDebug().addKeyValue("worker", req.worker().value())
                    .log("outcomes and claim in one transaction failed on a value; making them one after the other");
            return new OutcomesThenClaim(recordOutcomes(writes), claim(req));
        }
        OutcomeStatement.WrittenThenClaimed both = (OutcomeStatement.WrittenThenClaimed) written;
        // After the transaction, which the text committed: nothing here may fail the call now (see answers).
        List<FencedWrite> answers = OutcomeStatement.answers(dsl, writes, both.applied());
        heldOutcomes.update(answers, afterRunOut);
        releaseAfterRunsEnded(ended);
        return new OutcomesThenClaim(answers, claimed(req, both.claimed()));
    }

    private ResultQuery<Record> claimQuery(ClaimRequest req, String returning) {
        Object[] binds = claimBinds(req);
        return dsl.resultQuery(claimTemplate(req, returning), binds[0], val((Long) binds[1], SQLDataType.BIGINT), binds[2]);
    }

    /**
     * The claim statement for {@code req}'s shape, rendered on first use; with the outcome statement for
     * {@code outcomes} outcomes before it unless that is 0 (its text has one form for one, another for more),
     * skipping held rows or waiting for them.
     */
    private RenderedStatement rendered(ClaimRequest req, int outcomes, boolean skipHeld) {
        int lockWaitMs = outcomes > 0 && !skipHeld ? outcomeLockWaitMs : 0;
        ClaimShape key = new ClaimShape(req.queues().size() > 1, req.limit(), outcomes > 0, outcomes == 1, outcomes > 0 && skipHeld,
                lockWaitMs);
        return rendered.computeIfAbsent(key, shape -> {
            if (outcomes == 0) return RenderedStatement.of(claimQuery(req, "j.*"), claimTemplate(req, "j.*"));
            String template = schema.sql(OutcomeStatement.thenClaimTemplate(outcomes, shape.skipHeld(), CLAIM_PICK.formatted(claimPickArgs(req)),
                    CLAIM_UPDATE.formatted("j.*")));
            // The whole transaction in one text (pgjdbc's BEGIN goes with it): the bound first, where the call
            // waits, and COMMIT last, so the commit pgjdbc would send afterwards finds nothing to end. Three round
            // trips on a warm connection where the bound and the commit had each taken one of their own besides.
            return RenderedStatement.render(dsl, template, OutcomeStatement.thenClaimBinds(OutcomeStatement.sampleBinds(),
                    claimBinds(req))).around(shape.lockWaitMs() > 0 ? LockWait.bound(shape.lockWaitMs()) + OutcomeStatement.THEN : "",
                    OutcomeStatement.THEN + "COMMIT");
        });
    }

    private String claimTemplate(ClaimRequest req, String returning) {
        Object[] pick = claimPickArgs(req);
        return schema.sql(CLAIM).formatted(pick[0], pick[1], pick[2], pick[3], returning);
    }

    /** What the claim's pick is filled in with: the queue filter, the order, the limit, the lock. */
    private Object[] claimPickArgs(ClaimRequest req) {
        // One queue: equality keeps the index order usable for ORDER BY (= ANY would force a sort).
        String queueFilter = req.queues().size() == 1 ? "queue = {2}" : "queue = ANY({2}::text[])";
        String order = options.claimOrder() == ClaimOrder.FAIR ? "vtime, id" : "id";
        String lock = options.lockMode() == LockMode.SKIP_LOCKED ? " SKIP LOCKED" : "";
        return new Object[] {queueFilter, order, req.limit(), lock};
    }

    /** The claim's binds, {0} to {2}: worker, lease in ms, the queue (or an array of them). */
    private static Object[] claimBinds(ClaimRequest req) {
        Object queues = req.queues().size() == 1
                ? req.queues().getFirst().value()
                : req.queues().stream().map(QueueName::value).toArray(String[]::new);
        return new Object[] {req.worker().value(), req.leaseFor().toMillis(), queues};
    }

    /** Adds the claimed row to {@code jobs}, or to {@code refused} when the domain refuses one of its values. */
    private static void mapClaimed(JobRows.Columns r, List<Job> jobs, List<UnreadableRows.Quarantined> refused) {
        try {
            jobs.add(JobRows.toJob(r));
        } catch (RuntimeException e) {
            refused.add(new UnreadableRows.Quarantined(r.get(JOBS.ID), r.get(JOBS.ATTEMPTS),
                    "the row cannot be read: " + e.getMessage()));
        }
    }

    /**
     * The slow path, taken only after the claim statement failed on a value: the same claim returning
     * only (id, attempts), which cannot fail to print, then each row read on its own; a row that cannot
     * be printed or mapped is quarantined, the others are returned. One extra statement per claimed job.
     */
    private List<Job> claimRowByRow(ClaimRequest req) {
        Result<Record> claimed = run("claim", () -> claimQuery(req, "j.id, j.attempts").fetch());
        List<Job> jobs = new ArrayList<>(claimed.size());
        List<UnreadableRows.Quarantined> refused = new ArrayList<>();
        for (Record c : claimed) {
            long id = c.get(0, Long.class);
            int attempts = c.get(1, Integer.class);
            try {
                dsl.selectFrom(JOBS).where(JOBS.ID.eq(id)).fetchOptional().ifPresent(r -> mapClaimed(r::get, jobs, refused));
            } catch (RuntimeException e) {
                // The database itself failed (not the row): the claim fails, as any claim would, and the jobs
                // it leased come back when their leases lapse.
                if (!UnreadableRows.isUnprintableValue(e)) throw StoreErrors.translate("claim", e);
                refused.add(new UnreadableRows.Quarantined(id, attempts,
                        "PostgreSQL cannot print its payload or result: " + StoreErrors.serverMessage(e)));
            }
        }
        quarantine(req, refused);
        return inClaimOrder(jobs);
    }

    /**
     * Quarantines refused rows; a failure here is logged, not thrown, because the other jobs of the claim
     * are leased already and must reach the worker (an unquarantined row's lease lapses, and it comes back).
     */
    private void quarantine(ClaimRequest req, List<UnreadableRows.Quarantined> refused) {
        if (refused.isEmpty()) return;
        try {
            run("quarantine", () -> UnreadableRows.quarantine(dsl, req.worker(), refused));
        } catch (RuntimeException e) {
            log.atError().setCause(e).log("could not quarantine {} claimed row(s) the worker cannot run; they return"
                    + " when their leases lapse: {}", refused.size(), refused);
        }
    }

    /** RETURNING has no defined order; hand jobs out in claim order. */
    private List<Job> inClaimOrder(List<Job> jobs) {
        jobs.sort(options.claimOrder() == ClaimOrder.FAIR
                ? java.util.Comparator.comparingDouble((Job j) -> j.vtime().orElse(0)).thenComparing(Job::id)
                : java.util.Comparator.comparing(Job::id));
        return jobs;
    }

    // ---------------------------------------------------------------- fenced writes

    @Override
    public FencedWrite complete(FencingToken token, Optional<String> resultJson) {
        return recordOutcomes(List.of(new OutcomeWrite.Complete(token, resultJson))).getFirst();
    }

    @Override
    public FencedWrite fail(FencingToken token, String error, RetryDecision decision) {
        return recordOutcomes(List.of(new OutcomeWrite.Fail(token, error, decision))).getFirst();
    }

    /** One statement for all of them: see {@link OutcomeStatement}. */
    @Override
    public List<FencedWrite> recordOutcomes(List<OutcomeWrite> writes) {
        Objects.requireNonNull(writes, "writes");
        TenantCaps.EndedRuns ended = new TenantCaps.EndedRuns();
        List<FencedWrite> answers = run(writes.size() == 1 ? operation(writes.getFirst()) : "record outcomes", () -> {
            // A retried try starts over. Only the one-by-one fallback can have committed some writes before a
            // retried failure; their measured times are then lost (charged at their estimates) and the sweep
            // releases for them.
            ended.clear();
            return OutcomeStatement.write(dsl, writes, options.lockMode() == LockMode.SKIP_LOCKED, ended);
        });
        releaseAfterRunsEnded(ended);
        return answers;
    }

    /**
     * Runs of gated tenants (capped, or in a work queue) ended: hand in their measured run times and release
     * their held jobs now rather than at the next maintenance pass. The outcomes are committed already, so
     * a failure here is logged, never thrown: the sweep releases; the measured times of that batch are lost,
     * and its runs stay charged at their estimates.
     */
    private void releaseAfterRunsEnded(TenantCaps.EndedRuns ended) {
        if (ended.isEmpty()) return;
        try {
            run("release held jobs", () -> TenantCaps.releaseAfterRunsEnded(dsl, ended));
        } catch (RuntimeException e) {
            log.atWarn().setCause(e).log("releasing held jobs of {} tenant(s) after their runs ended failed;"
                    + " the next maintenance pass releases them: {}", ended.tenants(), StoreErrors.serverMessage(e));
        }
    }

    private static String operation(OutcomeWrite write) {
        return write instanceof OutcomeWrite.Complete ? "complete" : "fail";
    }

    /**
     * One statement for all of a worker's runs: the fence (id, worker, attempt, running) is applied
     * per token through an unnest join, so a token whose run was reaped or re-claimed extends nothing.
     * Rows are locked SKIP LOCKED: a row another transaction holds (a cancel inside an application's open
     * transaction, an outcome being written) is not waited for, which would hold back every other run's
     * extension for as long as that transaction stays open and let their leases lapse; it is returned too
     * if the fence still matches it in this statement's snapshot and its lease has not run
     * out (a reaper holding it, or one that committed after the snapshot, only takes lapsed leases), so it
     * counts as held, not lost, and the next heartbeat extends it. Never waiting, it cannot deadlock with {@link OutcomeStatement}.
     * The fence names {@code t.running}, not the literal, so each id is looked up by key: see {@link OutcomeStatement}.
     */
    private static final String HEARTBEAT = """
            WITH t AS MATERIALIZED (
                SELECT *, 'running'::text AS running FROM unnest({1}::bigint[], {2}::text[], {3}::int[]) AS t(id, worker, attempt)
            ), fenced AS (
                SELECT j.id FROM jobq.jobs j JOIN t ON j.id = t.id
                WHERE j.locked_by = t.worker AND j.attempts = t.attempt AND j.state = t.running
                FOR NO KEY UPDATE OF j SKIP LOCKED
            ), extended AS (
                UPDATE jobq.jobs j SET locked_until = now() + {0}::float8 * interval '1 millisecond'
                FROM fenced f WHERE j.id = f.id
                RETURNING j.id, j.locked_by, j.attempts
            )
            SELECT id, locked_by, attempts FROM extended
            UNION ALL
            SELECT j.id, j.locked_by, j.attempts FROM jobq.jobs j JOIN t ON j.id = t.id
            WHERE j.locked_by = t.worker AND j.attempts = t.attempt AND j.state = t.running
              AND j.locked_until > clock_timestamp() AND j.id NOT IN (SELECT id FROM extended)""";

    @Override
    public Set<FencingToken> heartbeat(Collection<FencingToken> tokens, Duration leaseFor) {
        if (tokens.isEmpty()) return Set.of();
        List<FencingToken> list = List.copyOf(tokens);
        Long[] ids = list.stream().map(t -> t.job().value()).toArray(Long[]::new);
        String[] workers = list.stream().map(t -> t.worker().value()).toArray(String[]::new);
        Integer[] attempts = list.stream().map(FencingToken::attempt).toArray(Integer[]::new);
        return run("heartbeat", () -> {
            // extended, or held by another transaction right now and still ours: either way not lost
            Set<FencingToken> held = new HashSet<>();
            for (Record r : dsl.resultQuery(schema.sql(HEARTBEAT), val(leaseFor.toMillis(), SQLDataType.BIGINT), ids, workers, attempts)) {
                held.add(new FencingToken(new JobId(r.get(0, Long.class)),
                        new io.jobq.domain.lease.WorkerId(r.get(1, String.class)), r.get(2, Integer.class)));
            }
            Set<FencingToken> lost = new HashSet<>(list);
            lost.removeAll(held);
            return Set.copyOf(lost);
        });
    }

    /**
     * Fenced like {@link #HEARTBEAT} ({@code OFFSET 0} keeps {@code t} a subquery of its own, as {@code
     * MATERIALIZED} keeps a CTE): a row re-claimed, reaped or finished meanwhile no longer matches. The
     * row keeps its vtime, so it is claimed next; a cancel asked meanwhile ends it. The pg_notify tells
     * idle workers at commit, as an enqueue does, instead of leaving the jobs to their next poll. Returns
     * the capped tenants whose job ended cancelled: that frees room under their cap, released after.
     */
    private static final String RELEASE = """
            WITH released AS (
                UPDATE jobq.jobs j SET
                    state = CASE WHEN j.cancel_requested THEN 'cancelled' ELSE 'queued' END,
                    finished_at = CASE WHEN j.cancel_requested THEN now() END,
                    attempts = j.attempts - 1,
                    started_at = CASE WHEN j.attempts > 1 THEN j.started_at END,
                    locked_by = NULL, locked_until = NULL
                FROM (SELECT *, 'running'::text AS running FROM unnest({0}::bigint[], {1}::text[], {2}::int[])
                      AS t(id, worker, attempt) OFFSET 0) t
                WHERE j.id = t.id AND j.locked_by = t.worker AND j.attempts = t.attempt AND j.state = t.running
                RETURNING j.queue, j.tenant, j.state, j.capped
            ), notified AS (
                SELECT pg_notify('%s', q) FROM (SELECT DISTINCT queue AS q FROM released WHERE state = 'queued') d
            )
            SELECT r.queue, r.tenant, r.state = 'cancelled' AND r.capped AS frees_cap, (SELECT count(*) FROM notified)
            FROM released r""";

    @Override
    public int release(Collection<FencingToken> tokens) {
        if (tokens.isEmpty()) return 0;
        List<FencingToken> list = List.copyOf(new java.util.LinkedHashSet<>(tokens));
        Long[] ids = list.stream().map(t -> t.job().value()).toArray(Long[]::new);
        String[] workers = list.stream().map(t -> t.worker().value()).toArray(String[]::new);
        Integer[] attempts = list.stream().map(FencingToken::attempt).toArray(Integer[]::new);
        TenantCaps.EndedRuns freed = new TenantCaps.EndedRuns();
        int released = run("release", () -> {
            freed.clear();
            Result<Record> rows = dsl.resultQuery(schema.sql(RELEASE.formatted(Enqueuer.CHANNEL)), ids, workers, attempts).fetch();
            for (Record r : rows) {
                if (Boolean.TRUE.equals(r.get(2, Boolean.class))) freed.addGated(new TenantCaps.Key(r.get(0, String.class), r.get(1, String.class)));
            }
            return rows.size();
        });
        releaseAfterRunsEnded(freed);
        return released;
    }

    /** Oldest claim first; the running rows are few (at most every worker's slots), read through jobs_leases. */
    @Override
    public List<Job> runsLeasedTo(WorkerId worker, int limit) {
        Objects.requireNonNull(worker, "worker");
        if (limit < 1 || limit > 100_000) throw new IllegalArgumentException("limit must be 1-100000, was " + limit);
        return run("runs leased to a worker", () -> {
            List<Job> jobs = new ArrayList<>();
            for (Record r : dsl.selectFrom(JOBS)
                    .where(JOBS.STATE.eq(JobState.RUNNING.dbName()).and(JOBS.LOCKED_BY.eq(worker.value())))
                    .orderBy(JOBS.STARTED_AT, JOBS.ID).limit(limit).fetch()) {
                try {
                    jobs.add(JobRows.toJob(r));
                } catch (RuntimeException e) {
                    // a row the domain refuses: left to its lease, which any maintainer reaps
                }
            }
            return jobs;
        });
    }

    // ---------------------------------------------------------------- maintenance

    /** Expired leases, oldest first; SKIP LOCKED so concurrent reapers split the work instead of waiting. */
    private static final String EXPIRED = """
            SELECT id, attempts, max_attempts FROM jobq.jobs
            WHERE state = 'running' AND locked_until < now()
            ORDER BY locked_until
            LIMIT {0}
            FOR UPDATE SKIP LOCKED""";

    /**
     * Writes the decider's answer per run: dead (delay_ms NULL) or scheduled at now() + delay_ms. The
     * reaped run keeps its attempt count (the claim counted it). Fenced on the attempt the decision was
     * made for, and on the lease still being expired, so a row re-claimed meanwhile is left alone.
     */
    private static final String REAP = """
            UPDATE jobq.jobs j SET
                state = CASE WHEN j.cancel_requested THEN 'cancelled' WHEN d.delay_ms IS NULL THEN 'dead' ELSE 'scheduled' END,
                run_at = CASE WHEN d.delay_ms IS NULL OR j.cancel_requested THEN j.run_at
                              ELSE now() + d.delay_ms::float8 * interval '1 millisecond' END,
                finished_at = CASE WHEN d.delay_ms IS NULL OR j.cancel_requested THEN now() END,
                last_error = format('lease expired: worker %s did not finish attempt %s of %s before its lease ran out at %s',
                                    j.locked_by, j.attempts, j.max_attempts, j.locked_until),
                locked_by = NULL, locked_until = NULL
            FROM unnest({0}::bigint[], {1}::int[], {2}::bigint[]) AS d(id, attempt, delay_ms)
            WHERE j.id = d.id AND j.attempts = d.attempt AND j.state = 'running' AND j.locked_until < now()""";

    /**
     * One transaction on the normal path: lock a batch of expired runs, ask the decider about each while
     * the locks are held, reap them in one statement. If that statement fails on one row's value (a
     * constraint the row breaks, added NOT VALID after it was written), the batch is reaped again row by
     * row, so only that row stays behind (logged, retried next period). Each row's UPDATE re-checks the
     * attempt, {@code state = 'running'} and {@code locked_until < now()} on the newest row version, so a
     * run is still reaped once, by the decision made for that attempt, even without the batch's locks.
     */
    @Override
    public int reapExpiredLeases(int limit, ExpiredLeaseDecider decider) {
        requirePositive(limit);
        Objects.requireNonNull(decider, "decider");
        try {
            return run("reap expired leases", () -> dsl.transactionResult(cfg -> {
                DSLContext tx = cfg.dsl();
                var expired = tx.resultQuery(schema.sql(EXPIRED), val(limit, SQLDataType.INTEGER)).fetch();
                return expired.isEmpty() ? 0 : reap(tx, expired, decider);
            }));
        } catch (RuntimeException e) {
            if (!UnreadableRows.isRowFault(e)) throw e;
            log.atWarn().log("reaping a batch of expired leases failed on a row's value ({}); reaping row by row",
                    StoreErrors.serverMessage(e));
        }
        var expired = run("reap expired leases", () -> dsl.resultQuery(schema.sql(EXPIRED), val(limit, SQLDataType.INTEGER)).fetch());
        int reaped = 0;
        for (Record r : expired) {
            try {
                reaped += run("reap expired lease", () -> reap(dsl, List.of(r), decider));
            } catch (RuntimeException e) {
                if (!UnreadableRows.isRowFault(e)) throw e;
                log.atWarn().addKeyValue("job", r.get(0, Long.class)).log("job {}: its expired lease cannot be reaped,"
                        + " skipped: {}", r.get(0, Long.class), StoreErrors.serverMessage(e));
            }
        }
        return reaped;
    }

    /** Reaps the (id, attempts, max_attempts) rows of {@link #EXPIRED}, each as {@code decider} decides. */
    private static int reap(DSLContext dsl, List<? extends Record> expired, ExpiredLeaseDecider decider) {
        Long[] ids = new Long[expired.size()];
        Integer[] attempts = new Integer[expired.size()];
        Long[] delays = new Long[expired.size()];
        for (int i = 0; i < expired.size(); i++) {
            Record r = expired.get(i);
            ids[i] = r.get(0, Long.class);
            attempts[i] = r.get(1, Integer.class);
            // A running row has attempts >= 1 (its claim counted it); one edited by hand to 0 is asked about as attempt 1.
            RetryDecision decision = decider.decide(Math.max(1, attempts[i]), r.get(2, Integer.class));
            delays[i] = switch (Objects.requireNonNull(decision, "the decider's decision")) {
                case RetryDecision.RetryAfter after -> after.delay().toMillis();
                case RetryDecision.Dead dead -> null;
            };
        }
        return dsl.query(JobqSchema.of(dsl).sql(REAP), ids, attempts, delays).execute();
    }

    /**
     * The queues with due scheduled jobs. A skip scan of jobs_due_by_queue (queue, run_at): each step of
     * the recursive CTE is one index probe for the next queue name above the last (PostgreSQL has no
     * loose index scan node; this is its idiom), then one probe per queue for a job already due. So the
     * cost follows the number of queues, not the number of scheduled or due jobs.
     */
    private static final String DUE_QUEUES = """
            WITH RECURSIVE queues(queue) AS (
                (SELECT queue FROM jobq.jobs WHERE state = 'scheduled' ORDER BY queue LIMIT 1)
                UNION ALL
                SELECT (SELECT j.queue FROM jobq.jobs j WHERE j.state = 'scheduled' AND j.queue > q.queue
                        ORDER BY j.queue LIMIT 1)
                FROM queues q WHERE q.queue IS NOT NULL
            )
            SELECT q.queue FROM queues q
            WHERE q.queue IS NOT NULL
              AND EXISTS (SELECT 1 FROM jobq.jobs j WHERE j.state = 'scheduled' AND j.queue = q.queue AND j.run_at <= now())""";

    /**
     * Promotes up to {@code limit} due jobs in EACH queue that has some ({@link DuePromotion}: a transaction
     * per queue, a few where a tenant's row is held), so a
     * queue whose promotion fails (a row or tenant the database refuses to update) is logged and skipped
     * while every other queue is promoted. An unreachable database fails the whole call, as before.
     */
    @Override
    public int promoteDue(int limit) {
        requirePositive(limit);
        List<String> queues = run("find queues with due jobs", () -> dsl.resultQuery(schema.sql(DUE_QUEUES)).fetch(0, String.class));
        int promoted = 0;
        for (String queue : queues) {
            try {
                promoted += run("promote due jobs", () -> promotion.promote(dsl, queue, limit));
            } catch (StoreUnavailableException e) {
                throw e;
            } catch (RuntimeException e) {
                log.atWarn().addKeyValue("queue", queue).setCause(e).log("promotion of queue {} failed and is skipped"
                        + " until the next period; other queues are promoted: {}", queue, StoreErrors.serverMessage(e));
            }
        }
        // Capped tenants whose runs ended without a release (reaped leases, a worker gone before its release).
        return promoted + run("release held jobs", () -> TenantCaps.sweep(dsl, limit));
    }

    // ---------------------------------------------------------------- operator actions

    /**
     * Requeues a dead job. Reads inside the transaction print the documents guarded (a failed statement
     * would abort it: a legacy row's unprintable payload must not turn a retry into an error), and the
     * tenant is charged by the stored queue and tenant, not by the stand-ins a lenient read shows.
     */
    @Override
    public RetryResult retryDead(JobId id) {
        return write("retry", ctx -> ctx.transactionResult(cfg -> {
            DSLContext tx = cfg.dsl();
            Record current = tx.select(JOBS.STATE, JOBS.QUEUE, JOBS.TENANT, JOBS.PRIORITY).from(JOBS).where(JOBS.ID.eq(id.value()))
                    .forUpdate().fetchOne();
            if (current == null) return new RetryResult.NotFound(id);
            if (!JobState.DEAD.dbName().equals(current.get(JOBS.STATE))) return new RetryResult.NotDead(readGuarded(tx, id));
            String queue = current.get(JOBS.QUEUE);
            String tenant = current.get(JOBS.TENANT);
            Record gate = tx.resultQuery(schema.sql(GATED), queue, tenant).fetchOne();
            boolean capped = gate != null && Boolean.TRUE.equals(gate.get(0, Boolean.class));
            // A capped tenant's job, or any in a work queue, is held, untagged, and released below if there is room.
            Double tag = capped ? null : tx.resultQuery(schema.sql(FairTags.CHARGE_ONE), queue, tenant).fetchSingle(0, Double.class);
            // attempts keep counting (a new run must never reuse an old run's fencing token), so the job
            // gets a fresh budget by raising max_attempts instead.
            tx.update(JOBS)
                    .set(JOBS.STATE, (capped ? JobState.HELD : JobState.QUEUED).dbName())
                    .set(JOBS.VTIME, tag)
                    .set(JOBS.CAPPED, capped)
                    .set(JOBS.RUN_AT, DSL.currentOffsetDateTime())
                    .set(JOBS.MAX_ATTEMPTS, JOBS.ATTEMPTS.plus(JOBS.MAX_ATTEMPTS))
                    .setNull(JOBS.FINISHED_AT)
                    .setNull(JOBS.RESULT)
                    .where(JOBS.ID.eq(id.value()))
                    .execute();
            if (capped) TenantCaps.release(tx, queue, tenant);
            else tx.execute("SELECT pg_notify({0}, {1})", Enqueuer.CHANNEL, queue);
            if (!capped) TenantPriority.reorder(tx, queue, tenant, current.get(JOBS.PRIORITY)); // CHARGE_ONE locked the tenant
            return new RetryResult.Requeued(readGuarded(tx, id));
        }));
    }

    /** One transaction: see {@link Cancellations}; a freed slot of a gated tenant is released after it. */
    @Override
    public CancelResult cancel(JobId id) {
        Objects.requireNonNull(id, "id");
        TenantCaps.EndedRuns freed = new TenantCaps.EndedRuns();
        CancelResult result = write("cancel", ctx -> {
            freed.clear();
            return Cancellations.cancel(ctx, id, freed);
        });
        releaseAfterRunsEnded(freed);
        return result;
    }

    @Override
    public Set<FencingToken> cancelRequested(Collection<FencingToken> tokens) {
        Objects.requireNonNull(tokens, "tokens");
        return run("cancel requests", () -> Cancellations.requested(dsl, tokens));
    }

    private static Job readGuarded(DSLContext tx, JobId id) {
        return tx.select(UnreadableRows.guardedColumns(JobqSchema.of(tx))).from(JOBS).where(JOBS.ID.eq(id.value()))
                .fetchSingle(JobRows::toJobLenient);
    }

    /**
     * Whether a tenant's runnable jobs are held for a release (it has a cap, or its queue charges by work),
     * locking its row as every charge does. Binds: {0} queue, {1} tenant.
     */
    private static final String GATED = """
            SELECT t.max_running IS NOT NULL OR %s FROM jobq.tenants t
            WHERE t.queue = {0} AND t.tenant = {1} FOR NO KEY UPDATE OF t""".formatted(FairTags.chargesWork("{0}"));

    /**
     * Upserts the queue's row (only the given settings change), then, when the queue now charges per job,
     * releases what tenants held only by a work window may now run, through the maintenance sweep.
     */
    @Override
    public QueueSettings configureQueue(QueueUpdate u) {
        Objects.requireNonNull(u, "update");
        QueueSettings now = u.applyTo(QueueSettings.defaults(u.queue()));
        Record row = run("configure queue", () -> dsl.insertInto(QUEUES, QUEUES.QUEUE, QUEUES.FAIRNESS, QUEUES.KEEP_DONE_S,
                        QUEUES.KEEP_DEAD_S, QUEUES.KEEP_CANCELLED_S)
                .values(u.queue().value(), now.fairness().wireName(), now.retention().done().toSeconds(),
                        now.retention().dead().toSeconds(), now.retention().cancelled().toSeconds())
                .onConflict(QUEUES.QUEUE).doUpdate()
                .set(QUEUES.FAIRNESS, u.fairness().<Field<String>>map(f -> DSL.val(f.wireName())).orElse(QUEUES.FAIRNESS))
                .set(QUEUES.KEEP_DONE_S, u.keepDone().<Field<Long>>map(d -> DSL.val(d.toSeconds())).orElse(QUEUES.KEEP_DONE_S))
                .set(QUEUES.KEEP_DEAD_S, u.keepDead().<Field<Long>>map(d -> DSL.val(d.toSeconds())).orElse(QUEUES.KEEP_DEAD_S))
                .set(QUEUES.KEEP_CANCELLED_S, u.keepCancelled().<Field<Long>>map(d -> DSL.val(d.toSeconds())).orElse(QUEUES.KEEP_CANCELLED_S))
                .returning(QUEUES.FAIRNESS, QUEUES.KEEP_DONE_S, QUEUES.KEEP_DEAD_S, QUEUES.KEEP_CANCELLED_S)
                .fetchSingle());
        Fairness fairness = Fairness.of(row.get(QUEUES.FAIRNESS));
        if (fairness == Fairness.JOBS && u.fairness().isPresent()) run("release held jobs", () -> TenantCaps.sweep(dsl, 1000));
        return new QueueSettings(u.queue(), fairness, new Retention(Duration.ofSeconds(row.get(QUEUES.KEEP_DONE_S)),
                Duration.ofSeconds(row.get(QUEUES.KEEP_DEAD_S)), Duration.ofSeconds(row.get(QUEUES.KEEP_CANCELLED_S))));
    }

    @Override
    public boolean takeUpkeepTurn(WorkerId worker, Duration gap) {
        Objects.requireNonNull(worker, "worker");
        if (gap.isNegative()) throw new IllegalArgumentException("gap must not be negative, was " + gap);
        return run("take the upkeep turn", () -> UpkeepTurn.take(dsl, worker, gap));
    }

    @Override
    public void workerAlive(WorkerId id, Collection<QueueName> queues, Collection<io.jobq.domain.job.TaskName> tasks, Duration beat) {
        run("worker alive", () -> {
            WorkerRegistry.alive(dsl, id, queues, tasks, beat);
            return null;
        });
    }

    @Override
    public void workerGone(WorkerId id) {
        run("worker gone", () -> {
            WorkerRegistry.gone(dsl, id);
            return null;
        });
    }

    @Override
    public List<WorkerInfo> liveWorkers() {
        return run("live workers", () -> WorkerRegistry.live(dsl));
    }

    /** See {@link RetentionSweep}. */
    @Override
    public int deleteFinished(int limit) {
        requirePositive(limit);
        return run("delete finished jobs", () -> RetentionSweep.delete(dsl, limit));
    }

    /** One transaction: see {@link TenantCaps#configure}. */
    @Override
    public TenantSettings configureTenant(TenantUpdate update) {
        Objects.requireNonNull(update, "update");
        return write("configure tenant", ctx -> TenantCaps.configure(ctx, update));
    }

    // ---------------------------------------------------------------- schedules (ScheduleTable)

    @Override
    public ScheduleWrite putSchedule(ScheduleDefinition definition) {
        Objects.requireNonNull(definition, "definition");
        return write("put schedule", ctx -> ScheduleTable.put(ctx, definition));
    }

    @Override
    public Optional<Schedule> schedule(ScheduleName name) {
        Objects.requireNonNull(name, "name");
        return run("read schedule", () -> ScheduleTable.get(dsl, name));
    }

    @Override
    public SchedulePage schedules(String after, int limit) {
        Objects.requireNonNull(after, "after");
        requirePositive(limit);
        return run("list schedules", () -> ScheduleTable.page(dsl, after, limit));
    }

    @Override
    public ScheduleTimings scheduleTimings(String after, int limit) {
        Objects.requireNonNull(after, "after");
        requirePositive(limit);
        return run("list schedule timings", () -> ScheduleTable.timings(dsl, after, limit));
    }

    @Override
    public boolean deleteSchedule(ScheduleName name) {
        Objects.requireNonNull(name, "name");
        return write("delete schedule", ctx -> ScheduleTable.delete(ctx, name));
    }

    @Override
    public Optional<JobId> fireSchedule(ScheduleName name, long revision, Instant tick) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(tick, "tick");
        try {
            return run("fire schedule", () -> dsl.transactionResult(cfg -> {
                LockWait.limit(cfg.dsl());
                return ScheduleTable.fire(cfg.dsl(), name, revision, tick);
            }));
        } catch (JobQueueException e) {
            if (ScheduleTable.isTickFiredTwice(e)) return Optional.empty(); // another firer's; its job stands
            if (LockWait.ranOut(e)) {
                // its tenant's row (or the schedule's) held longer: the firer's other schedules go on, and this tick,
                // still due, fires on a later pass
                log.atInfo().addKeyValue("schedule", name.value()).log("schedule {} did not fire its tick {}: a row it needs"
                        + " (its tenant's, held by an open enqueue?) stayed locked over {} ms; a later pass fires it",
                        name.value(), tick, LockWait.MAX_MS);
                return Optional.empty();
            }
            throw e;
        }
    }

    @Override
    public Instant now() {
        return run("read the clock", () -> dsl.resultQuery("SELECT now()").fetchOne(0, java.time.OffsetDateTime.class).toInstant());
    }

    // ---------------------------------------------------------------- API keys (ApiKeyTable)

    @Override
    public ApiKey saveApiKey(ApiKey key) {
        Objects.requireNonNull(key, "key");
        return run("save API key", () -> ApiKeyTable.save(dsl, key));
    }

    @Override
    public Optional<ApiKey> apiKey(String id) {
        Objects.requireNonNull(id, "id");
        return run("read API key", () -> ApiKeyTable.get(dsl, id));
    }

    @Override
    public List<ApiKey> apiKeys(TenantId tenant) {
        Objects.requireNonNull(tenant, "tenant");
        return run("list API keys", () -> ApiKeyTable.of(dsl, tenant));
    }

    @Override
    public boolean revokeApiKey(TenantId tenant, String id) {
        Objects.requireNonNull(tenant, "tenant");
        Objects.requireNonNull(id, "id");
        return run("revoke API key", () -> ApiKeyTable.revoke(dsl, tenant, id));
    }

    // ---------------------------------------------------------------- reads

    @Override
    public Optional<Job> get(JobId id) {
        return run("get", () -> fetch(id));
    }

    /**
     * {@link #get} without its own {@link #run}: for use inside another operation's, so retries do not nest.
     * Never fails on a stored value: names are mapped leniently, unprintable documents shown as null.
     */
    private Optional<Job> fetch(JobId id) {
        return UnreadableRows.readOne(dsl, id.value());
    }

    @Override
    public List<Job> list(JobQuery q) {
        Condition filter = listFilter(q);
        return read("list", r -> UnreadableRows.readPage(r, filter, q.limit()));
    }

    /** The WHERE of a listing: every filter the query sets, and the keyset cursor. */
    private static Condition listFilter(JobQuery q) {
        Condition where = DSL.noCondition();
        if (q.tenant().isPresent()) where = where.and(JOBS.TENANT.eq(q.tenant().get().value()));
        if (q.queue().isPresent()) where = where.and(JOBS.QUEUE.eq(q.queue().get().value()));
        if (q.state().isPresent()) where = where.and(JOBS.STATE.eq(q.state().get().dbName()));
        if (q.task().isPresent()) where = where.and(JOBS.TASK.eq(q.task().get().value()));
        if (q.after().isPresent()) where = where.and(JOBS.ID.lt(q.after().get().value()));
        return where;
    }

    @Override
    public List<JobSummary> summaries(JobQuery q) {
        Condition filter = listFilter(q);
        return read("summaries", tx -> tx.select(JOBS.ID, JOBS.TENANT, JOBS.QUEUE, JOBS.TASK, JOBS.STATE, JOBS.ATTEMPTS,
                        JOBS.MAX_ATTEMPTS, JOBS.CREATED_AT, JOBS.FINISHED_AT, DSL.left(JOBS.LAST_ERROR, JobSummary.ERROR_START))
                .from(JOBS).where(filter).orderBy(JOBS.ID.desc()).limit(q.limit())
                .fetch(r -> new JobSummary(new JobId(r.value1()), new TenantId(JobRows.storedName(r.value2())),
                        new QueueName(JobRows.storedName(r.value3())), new io.jobq.domain.job.TaskName(JobRows.storedName(r.value4())),
                        JobState.fromDbName(r.value5()), r.value6(), r.value7(), r.value8().toInstant(),
                        Optional.ofNullable(r.value9()).map(java.time.OffsetDateTime::toInstant), Optional.ofNullable(r.value10()))));
    }

    /** See {@link JobCounts#byQueueAndState}. */
    @Override
    public Map<QueueName, Map<JobState, Long>> countsByQueueAndState() {
        return read("stats", JobCounts::byQueueAndState);
    }

    /** See {@link JobCounts#live}. */
    @Override
    public Map<QueueName, Map<JobState, Long>> liveCountsByQueue() {
        return read("live counts", JobCounts::live);
    }

    @Override
    public Map<QueueName, Duration> oldestRunnableAge() {
        return read("oldest runnable", JobCounts::oldestRunnableAge);
    }

    @Override
    public List<CapUsage> capUsage(int limit) {
        requirePositive(limit);
        return read("cap usage", r -> TenantCaps.usage(r, limit));
    }

    /** See {@link ActivityReads#tenants}. */
    @Override
    public List<TenantActivity> tenantActivity(Optional<TenantId> tenant, int limit) {
        requirePositive(limit);
        return read("tenant activity", r -> ActivityReads.tenants(r, tenant, limit));
    }

    /** See {@link ActivityReads#finished}. */
    @Override
    public List<FinishedCount> finishedPerMinute(Optional<TenantId> tenant, int minutes) {
        if (minutes < 1 || minutes > 1_440) throw new IllegalArgumentException("minutes must be 1-1440, was " + minutes);
        return read("finished per minute", r -> ActivityReads.finished(r, tenant, minutes));
    }

    @Override
    public List<Backlog> largestBacklogs(int limit) {
        requirePositive(limit);
        return read("largest backlogs", tx -> tx.select(JOBS.QUEUE, JOBS.TENANT, DSL.count())
                .from(JOBS)
                .where(JOBS.STATE.eq(JobState.QUEUED.dbName()))
                .groupBy(JOBS.QUEUE, JOBS.TENANT)
                .orderBy(DSL.count().desc(), JOBS.QUEUE, JOBS.TENANT)
                .limit(limit)
                .fetch(r -> new Backlog(new QueueName(JobRows.storedName(r.value1())),
                        new TenantId(JobRows.storedName(r.value2())), r.value3())));
    }

    @Override
    public void ping() {
        run("ping", () -> dsl.selectOne().fetch());
    }

    // ---------------------------------------------------------------- cleanup (VacuumHealthQuery, SelfVacuum)

    @Override
    public Optional<VacuumHealth> vacuumHealth() {
        return Optional.of(run("vacuum health", () -> VacuumHealthQuery.read(dsl)));
    }

    /** See {@link SelfVacuum}: VACUUMs a table only while autovacuum leaves it alone. */
    @Override
    public boolean vacuumIfNeeded() {
        return run("vacuum", () -> selfVacuum.runIfDue(dsl));
    }

    // ---------------------------------------------------------------- plumbing

    /**
     * How many times an operation is tried when the database aborts it for a concurrent transaction
     * (deadlock or serialization failure) before {@link ConcurrentUpdateException} reaches the caller.
     */
    static final int CONFLICT_ATTEMPTS = 3;

    /**
     * Runs one store operation and translates its failures ({@link StoreErrors}). A conflict abort is
     * retried here, after a short random pause so two colliding callers do not collide again: it is
     * safe because every write in an operation is a single auto-commit statement or one transaction,
     * and the aborted one wrote nothing. (An enqueue committing alone, {@link Enqueuer#insertCommitted},
     * may follow its statement with a release: it must never throw once that statement has committed, or
     * this would run the statement again.) Callers see {@link ConcurrentUpdateException} only after
     * {@link #CONFLICT_ATTEMPTS} aborts in a row.
     */
    static <T> T run(String operation, Supplier<T> body) {
        for (int attempt = 1; ; attempt++) {
            try {
                return body.get();
            } catch (RuntimeException e) {
                RuntimeException translated = StoreErrors.translate(operation, e);
                if (!(translated instanceof ConcurrentUpdateException) || attempt >= CONFLICT_ATTEMPTS) throw translated;
                pauseAfterConflict(attempt);
            }
        }
    }

    /**
     * A read for people: {@code body} on {@link #reads} (the read timeout), as {@link #run}, and one cancelled
     * by that timeout (SQLSTATE 57014) answers {@link StoreErrors#cancelled}. The one way to a read for
     * people, so the timed context and the 503 that goes with it cannot drift apart.
     */
    private <T> T read(String operation, java.util.function.Function<DSLContext, T> body) {
        return timed(operation, reads, "readTimeout", body);
    }

    /**
     * A write on a caller's behalf: {@code body} on {@link #writes} (the write timeout), as {@link #run}; one
     * cancelled by that timeout changed nothing (its transaction rolled back) and answers
     * {@link StoreErrors#cancelled}.
     */
    private <T> T write(String operation, java.util.function.Function<DSLContext, T> body) {
        return timed(operation, writes, "writeTimeout", body);
    }

    private static <T> T timed(String operation, DSLContext timed, String option, java.util.function.Function<DSLContext, T> body) {
        try {
            return run(operation, () -> body.apply(timed));
        } catch (JobQueueException e) {
            if (!StoreErrors.QUERY_CANCELED.equals(StoreErrors.sqlState(e))) throw e;
            throw StoreErrors.cancelled(operation, option, e);
        }
    }

    /** Up to 10 ms × attempt, random (full jitter). */
    private static void pauseAfterConflict(int attempt) {
        try {
            Thread.sleep(ThreadLocalRandom.current().nextLong(1, 10L * attempt + 1));
        } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
        }
    }

    private static void requirePositive(int limit) {
        if (limit < 1) throw new IllegalArgumentException("limit must be >= 1, was " + limit);
    }
}
