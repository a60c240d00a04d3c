package io.jobq.postgres;

import static io.jobq.application.port.JobStore.MAX_ERROR_BYTES;
import static io.jobq.application.port.JobStore.MAX_RESULT_BYTES;
import static io.jobq.postgres.schema.Tables.JOBS;

import io.jobq.application.port.FencedWrite;
import io.jobq.application.port.OutcomeWrite;
import io.jobq.application.port.Throwables;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobState;
import io.jobq.domain.job.JsonNumbers;
import io.jobq.domain.job.StoredText;
import io.jobq.domain.lease.FencingToken;
import io.jobq.domain.retry.RetryDecision;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.jooq.DSLContext;
import org.jooq.exception.DataAccessException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes runs' outcomes (done, scheduled for a retry, dead) in ONE fenced statement, however many: an
 * {@code UPDATE … FROM} the outcomes ({@code unnest} of the bind arrays, or their first elements for one: see
 * {@link #update}) whose join applies the fence (id, worker, attempt, state running) row by row, so a stale token among them changes nothing and the others apply. A run whose job had cancelling
 * requested and that did not succeed ends {@code cancelled}, not retried or dead. This is the only SQL that
 * records an outcome: {@link PostgresJobStore#complete} and {@link PostgresJobStore#fail} are batches of one,
 * and {@link #thenClaimTemplate} sends its very text before the claim loop's claim.
 *
 * <p>A result that cannot be stored does not fail the run: over {@value
 * io.jobq.application.port.JobStore#MAX_RESULT_BYTES} bytes, or with numbers no statement could print back,
 * it is dropped before the statement, with a note in {@code last_error}. One the database refuses outright
 * (a number beyond {@code numeric}'s range) fails the whole statement, which then changed nothing; the
 * writes are made again one at a time, and the refused one without the refused value (a result, or an
 * error text a database in another encoding cannot hold), so one outcome never costs another.
 */
final class OutcomeStatement {
    private static final Logger log = LoggerFactory.getLogger(OutcomeStatement.class);

    /**
     * Where claims skip locked rows ({@link LockMode#SKIP_LOCKED}, the default), the outcome statement never
     * waits long: alone ({@link #write}) it locks the fenced rows {@code SKIP LOCKED}; carried by a claim
     * ({@link #thenClaimTemplate}) each of its lock waits lasts at most {@link LockWait#MAX_MS} ms (one per held
     * row), and once one runs out the call is made again skipping. A skipped row, one
     * another transaction holds (an application's open transaction cancelling the job, a heartbeat or a claim
     * about to commit), is left out, its write answered {@link FencedWrite.Held} ({@link #answers}), and the
     * worker writes it again later. Waiting unbounded would hold back every other outcome in the batch, and the
     * claim that carries them, for as long as that transaction stays open. Under {@link LockMode#WAIT} the
     * statement waits, in id order (two multi-row
     * updates locking in plan order can deadlock): there every claim that waits for a row and then finds it
     * claimed keeps it locked until its statement ends, so ending runs' rows are held for a moment all the
     * time (skipping them, that row of the bench read 58 / 39 % of its floor at 8 / 16 workers in a full run,
     * against 130 / 96 % waiting), and the
     * outcomes are written by a thread of their own beside the claims ({@code OutcomeWriter}).
     * {@code FOR NO KEY UPDATE} is the lock the UPDATE itself takes.
     *
     * <p>The fence compares {@code state} with {@code o.running}, a constant column of the {@code MATERIALIZED}
     * {@code o}, never with the literal {@code 'running'}: the literal matches the predicate of the partial index
     * {@code jobs_leases} ({@code WHERE state = 'running'}), and a planner whose statistics were taken while few
     * jobs ran (always so right after a bulk enqueue) then prefers walking that whole index to looking each id
     * up. That index holds an entry for every lease taken since the last vacuum: under 16 busy workers each
     * one-job outcome read 3,600 buffers this way, and 21 by primary key (docs/benchmarks.md). Every statement
     * that fences runs by token arrays (the heartbeat, the release, the cancel check, the quarantine) does the
     * same; {@code RunFencePlanTest} pins their plans. The reaper keeps the literal: it looks for expired
     * leases, which is what {@code jobs_leases} is for.
     */
    private static String fenced(boolean skipLocked) {
        return """
            fenced AS (
                SELECT j.id, CASE WHEN j.cancel_requested AND o.state <> 'done' THEN 'cancelled' ELSE o.state END AS state
                FROM jobq.jobs j JOIN o ON j.id = o.id
                WHERE j.locked_by = o.worker AND j.attempts = o.attempt AND j.state = o.running
                %s
            )""".formatted(skipLocked ? "FOR NO KEY UPDATE OF j SKIP LOCKED" : "ORDER BY j.id\n                FOR NO KEY UPDATE OF j");
    }
    /** The outcomes, one row per element of the binds' arrays. */
    private static final String MANY = """
            o AS MATERIALIZED (
                SELECT *, 'running'::text AS running
                FROM unnest({0}::bigint[], {1}::text[], {2}::int[], {3}::text[], {4}::text[], {5}::text[], {6}::float8[])
                    AS o(id, worker, attempt, state, result, last_error, retry_ms)
            ), """;
    /**
     * One outcome: the same binds (arrays of one), read by subscript. A {@code SELECT} without {@code FROM} is
     * one row to the planner, so the cached generic plan costs what a custom one does and PostgreSQL keeps it;
     * over {@code unnest} of an array parameter it guesses 10 rows, and would plan a batch of one afresh on
     * every execution (0.32–0.37 ms, more than the lookup; docs/benchmarks.md).
     */
    private static final String ONE = """
            o AS MATERIALIZED (
                SELECT ({0}::bigint[])[1] AS id, ({1}::text[])[1] AS worker, ({2}::int[])[1] AS attempt,
                    ({3}::text[])[1] AS state, ({4}::text[])[1] AS result, ({5}::text[])[1] AS last_error,
                    ({6}::float8[])[1] AS retry_ms, 'running'::text AS running
            ), """;
    private static final String WRITE = """
            UPDATE jobq.jobs j SET
                state = f.state,
                result = CASE WHEN f.state = 'done' THEN o.result::jsonb ELSE j.result END,
                last_error = coalesce(o.last_error, j.last_error),
                finished_at = CASE WHEN f.state = 'scheduled' THEN NULL ELSE now() END,
                run_at = CASE WHEN f.state = 'scheduled' THEN now() + o.retry_ms * interval '1 millisecond' ELSE j.run_at END,
                locked_by = NULL,
                locked_until = NULL
            FROM o JOIN fenced f ON f.id = o.id
            WHERE j.id = o.id
            RETURNING j.*""";
    /**
     * The outcome statement for {@code n} outcomes (n ≥ 1): the same binds and columns either way.
     *
     * @param skipLocked whether claims skip locked rows, and so the outcomes too (see {@link #fenced})
     */
    static String update(int n, boolean skipLocked) {
        return "WITH " + (n == 1 ? ONE : MANY) + fenced(skipLocked) + "\n" + WRITE;
    }
    /** How many binds {@link #update} takes, {0} to {6}: a statement built around it numbers its own from here. */
    static final int BINDS = 7;

    /** What a rendered {@link #update} depends on. */
    private record Shape(JobqSchema schema, boolean one, boolean skipLocked) {}

    /** {@link #update} as jOOQ renders it, by its {@link Shape}: rendered once each. */
    private static final Map<Shape, RenderedStatement> RENDERED = new ConcurrentHashMap<>();

    private OutcomeStatement() {}

    private static RenderedStatement rendered(DSLContext dsl, int n, boolean skipLocked) {
        return RENDERED.computeIfAbsent(new Shape(JobqSchema.of(dsl), n == 1, skipLocked), key -> RenderedStatement.render(dsl,
                key.schema().sql(update(key.one() ? 1 : 2, key.skipLocked())), sampleBinds()));
    }

    /** One outcome as the statement's columns. {@code lastError} null keeps the row's (a done run's default). */
    private record Row(OutcomeWrite write, String state, String result, String lastError, Long retryMs) {}

    /**
     * @param skipLocked whether claims skip locked rows, and so the outcomes too ({@link #fenced})
     * @param ended receives every applied row: the caller releases the held jobs of the gated tenants among
     *     them and hands in the measured run times ({@link TenantCaps#releaseAfterRunsEnded})
     * @return one answer per write, in their order; a rejected write carries the row as it is now
     * @throws DataAccessException for a failure of the database, not of a value (the caller's retry policy applies)
     */
    static List<FencedWrite> write(DSLContext dsl, List<OutcomeWrite> writes, boolean skipLocked, TenantCaps.EndedRuns ended) {
        OutcomeWrite.requireDistinctJobs(writes);
        if (writes.isEmpty()) return List.of();
        List<Row> rows = writes.stream().map(OutcomeStatement::row).toList();
        Map<Long, Job> applied;
        try {
            applied = execute(dsl, rows, skipLocked, ended);
        } catch (DataAccessException e) {
            if (!isRefusedValue(e)) throw e;
            return rows.size() == 1 ? List.of(writeWithoutRefusedValue(dsl, rows.getFirst(), e, skipLocked, ended))
                    : oneByOne(dsl, writes, skipLocked, ended);
        }
        return answers(dsl, writes, applied);
    }

    private static List<FencedWrite> oneByOne(DSLContext dsl, List<OutcomeWrite> writes, boolean skipLocked, TenantCaps.EndedRuns ended) {
        List<FencedWrite> out = new ArrayList<>(writes.size());
        for (OutcomeWrite w : writes) out.add(write(dsl, List.of(w), skipLocked, ended).getFirst());
        return out;
    }

    /**
     * The one write whose value the database refused, made again without it: a done run stays done with
     * its result dropped, a failed run keeps its decision with a note instead of its error text; either
     * way last_error says why. Nothing a run hands in can then fail the write of another.
     */
    private static FencedWrite writeWithoutRefusedValue(DSLContext dsl, Row refused, DataAccessException why, boolean skipLocked,
            TenantCaps.EndedRuns ended) {
        String reason = "the database refused it: " + Throwables.rootMessage(why);
        boolean done = refused.state().equals(JobState.DONE.dbName());
        Row row = new Row(refused.write(), refused.state(), null,
                note((done ? "result not stored: " : "error text not stored: ") + reason), refused.retryMs());
        return answers(dsl, List.of(row.write()), execute(dsl, List.of(row), skipLocked, ended)).getFirst();
    }

    private static Row row(OutcomeWrite write) {
        return switch (write) {
            case OutcomeWrite.Complete c -> completeRow(c);
            case OutcomeWrite.Fail f -> {
                String error = StoredText.sanitize(f.error(), MAX_ERROR_BYTES);
                yield switch (f.decision()) {
                    case RetryDecision.RetryAfter r -> new Row(f, JobState.SCHEDULED.dbName(), null, error, r.delay().toMillis());
                    case RetryDecision.Dead d -> new Row(f, JobState.DEAD.dbName(), null, error, null);
                };
            }
        };
    }

    private static Row completeRow(OutcomeWrite.Complete c) {
        String done = JobState.DONE.dbName();
        Optional<String> result = c.resultJson().map(JsonText::storable);
        long bytes = result.map(StoredText::utf8Length).orElse(0L);
        if (bytes > MAX_RESULT_BYTES) {
            return new Row(c, done, null, note("result not stored: " + bytes + " bytes of JSON exceed the cap of "
                    + MAX_RESULT_BYTES + " bytes"), null);
        }
        // Only scanned under the size cap. Storable, but no statement could return the row afterwards.
        long growth = result.map(JsonNumbers::renderedGrowth).orElse(0L);
        if (growth > JsonNumbers.MAX_RENDERED_GROWTH) {
            return new Row(c, done, null, note("result not stored: " + JsonNumbers.tooLargeMessage("it", growth)), null);
        }
        return new Row(c, done, result.orElse(null), null, null);
    }

    private static String note(String text) {
        return StoredText.sanitize(text, MAX_ERROR_BYTES);
    }

    /** @return the rows the statement changed, by job id; adds them to {@code ended} */
    private static Map<Long, Job> execute(DSLContext dsl, List<Row> rows, boolean skipLocked, TenantCaps.EndedRuns ended) {
        // Read as the table's columns (RETURNING j.* lists them in table order), as the claim's rows are.
        return collect(rendered(dsl, rows.size(), skipLocked).fetch(dsl, binds(rows)), rows, ended);
    }

    /** The statement's binds {0} to {6}: one array per column of the unnest. */
    private static Object[] binds(List<Row> rows) {
        int n = rows.size();
        Long[] ids = new Long[n];
        String[] workers = new String[n];
        Integer[] attempts = new Integer[n];
        String[] states = new String[n];
        String[] results = new String[n];
        String[] errors = new String[n];
        Double[] retryMs = new Double[n];
        for (int i = 0; i < n; i++) {
            Row r = rows.get(i);
            ids[i] = r.write().token().job().value();
            workers[i] = r.write().token().worker().value();
            attempts[i] = r.write().token().attempt();
            states[i] = r.state();
            results[i] = r.result();
            errors[i] = r.lastError();
            retryMs[i] = r.retryMs() == null ? null : r.retryMs().doubleValue();
        }
        return new Object[] {ids, workers, attempts, states, results, errors, retryMs};
    }

    /** The changed rows {@code records} as jobs by id; each is added to {@code ended} with its run's measured time. */
    private static Map<Long, Job> collect(List<JobRow> records, List<Row> rows, TenantCaps.EndedRuns ended) {
        Map<Long, Row> byId = new HashMap<>();
        for (Row r : rows) byId.put(r.write().token().job().value(), r);
        Map<Long, Job> applied = new HashMap<>();
        for (JobRow r : records) {
            Job job = JobRows.toJobLenient(r);
            applied.put(job.id().value(), job);
            ended.add(r, byId.get(job.id().value()).write().ran());
        }
        return applied;
    }

    // ---------------------------------------------------------------- outcomes, then a claim

    /** What separates the statements of a {@link #thenClaimTemplate} text (and the bound and COMMIT around it). */
    static final String THEN = ";\n";

    /**
     * The template of the claim loop's store call: the outcome statement exactly as {@link #update} (the store
     * sends it only with {@code SKIP LOCKED} claims, waiting for a held row under {@link LockWait}, or skipping
     * it), then the
     * given claim, as TWO statements in one text, {@code <UPDATE>;\nWITH <claimCte>\n<claimUpdate>}, which the
     * store runs in one transaction ({@link RenderedStatement#fetchEach} says why it must open one), the
     * text's lock-wait bound before it and its {@code COMMIT} after it (see {@link RenderedStatement#fetchEach}). The
     * claim's placeholders {@code {n}} become {@code {n + }{@value #BINDS}{@code }}. One commit instead of two:
     * on the 2-core bench machine a pgbench loop of outcomes and claim in one commit (then as one statement)
     * did 1.6–1.9× the jobs/s of two commits at 1 client (docs/benchmarks.md).
     *
     * <p>Why two statements and not one (a {@code WITH} of both, as jobq had): a statement reads with the
     * snapshot it began with. One statement's claim, run after its outcomes, read the queue's head as it was
     * before them, re-checked the rows other workers had claimed meanwhile and kept them locked till its commit,
     * and their outcomes then waited on those locks: under 16 busy workers the one statement took 7.3–8.0 ms
     * per call, the two statements 1.9–2.2 + 1.2–1.3 ms (docs/benchmarks.md). The claim's own statement reads
     * the queue as the outcomes leave it.
     *
     * <p>Why no long wait and no deadlock: each lock wait of the outcome statement lasts at most
     * {@link LockWait#MAX_MS} ms, after which the store makes the call again skipping held rows (see
     * {@link #fenced}); it comes first, and the store uses this only with {@code SKIP LOCKED} claims, so the call
     * waits on no lock while it holds the rows it claimed. {@code OutcomesThenClaimTest} pins that a held
     * ending run's row holds back neither the other outcomes nor the claim until its holder lets go (and fails
     * on the variant that waits unbounded). No row is changed
     * twice: the outcomes' rows are running and leave that state, the claim's are queued; a run ending here frees
     * nothing the claim could take at once (a retried job is scheduled, a held job is released after the commit).
     *
     * @param outcomes how many outcomes the text is for (its form differs for one: {@link #update})
     * @param skipHeld whether the outcome statement skips held rows ({@link #fenced}), or waits for them in id order
     * @param claimCte the claim's {@code picked AS MATERIALIZED (…)}
     * @param claimUpdate the claim's {@code UPDATE … FROM picked … RETURNING j.*}
     */
    static String thenClaimTemplate(int outcomes, boolean skipHeld, String claimCte, String claimUpdate) {
        return update(outcomes, skipHeld) + THEN + "WITH " + shifted(claimCte) + "\n" + shifted(claimUpdate);
    }

    private static String shifted(String template) {
        return java.util.regex.Pattern.compile("\\{(\\d+)}").matcher(template)
                .replaceAll(m -> "{" + (Integer.parseInt(m.group(1)) + BINDS) + "}");
    }

    /** The binds of a {@link #thenClaimTemplate} statement: the outcome's {0} to {6}, then the claim's, shifted. */
    static Object[] thenClaimBinds(Object[] outcomeBinds, Object[] claimBinds) {
        Object[] all = java.util.Arrays.copyOf(outcomeBinds, BINDS + claimBinds.length);
        System.arraycopy(claimBinds, 0, all, BINDS, claimBinds.length);
        return all;
    }

    /** Sample binds of {@link #update}'s types, for rendering a statement built around it. */
    static Object[] sampleBinds() {
        return new Object[] {new Long[0], new String[0], new Integer[0], new String[0], new String[0], new String[0], new Double[0]};
    }

    /**
     * What {@link #writeThenClaim} returns: the jobs its writes applied, by id (answer them with {@link #answers},
     * after the transaction), and the claimed rows as returned.
     */
    record WrittenThenClaimed(Map<Long, Job> applied, List<JobRow> claimed) {}

    /**
     * Writes {@code writes} and claims: {@code statement}, rendered from {@link #thenClaimTemplate}, bound with
     * the writes' binds and then {@code claimBinds}. Call it inside a transaction, so that the two commit together
     * ({@link RenderedStatement#fetchEach}). A value the database refuses fails the transaction, which then
     * changed nothing, and the caller makes the two parts on their own (each has its own fallback for a
     * refused value).
     *
     * @param writes 1..n outcomes of distinct runs
     * @throws DataAccessException as the statement failed
     */
    static WrittenThenClaimed writeThenClaim(DSLContext dsl, RenderedStatement statement, List<OutcomeWrite> writes,
            Object[] claimBinds, TenantCaps.EndedRuns ended) {
        OutcomeWrite.requireDistinctJobs(writes);
        List<Row> rows = writes.stream().map(OutcomeStatement::row).toList();
        Object[] all = thenClaimBinds(binds(rows), claimBinds);
        List<List<JobRow>> results = statement.fetchEach(dsl, all);
        if (results.size() != 2) throw new IllegalStateException("expected the outcomes' rows and the claimed, got " + results.size() + " results");
        return new WrittenThenClaimed(collect(results.get(0), rows, ended), results.get(1));
    }

    /** Whether the database refused a value of the statement (see {@link #isRefusedValue(DataAccessException)}). */
    static boolean refusedAValue(RuntimeException e) {
        return e instanceof DataAccessException d && isRefusedValue(d);
    }

    /**
     * One answer per write, in their order, once the statement that made them has committed: {@link FencedWrite.Applied}
     * for those in {@code applied}; each other one's row is read again (in auto-commit: {@link UnreadableRows#readOne})
     * to tell {@link FencedWrite.Held} from {@link FencedWrite.Rejected}. A read that fails answers Held: the
     * statement has committed, and failing the call would report the writes it applied as failed too; written
     * again, the fence decides exactly.
     */
    static List<FencedWrite> answers(DSLContext dsl, List<OutcomeWrite> writes, Map<Long, Job> applied) {
        List<FencedWrite> out = new ArrayList<>(writes.size());
        for (OutcomeWrite w : writes) {
            Job job = applied.get(w.token().job().value());
            if (job != null) {
                out.add(new FencedWrite.Applied(job));
                continue;
            }
            Optional<Job> now;
            try {
                now = UnreadableRows.readOne(dsl, w.token().job().value());
            } catch (RuntimeException e) {
                log.atWarn().addKeyValue("job", w.token().job().value()).log("the outcome of job {} was left out and its row"
                        + " could not be read again ({}); answered held, to be written again", w.token().job().value(),
                        Throwables.rootMessage(e));
                out.add(new FencedWrite.Held(w.token()));
                continue;
            }
            out.add(now.filter(j -> stillCarries(j, w.token())).isPresent() ? new FencedWrite.Held(w.token())
                    : new FencedWrite.Rejected(w.token(), now));
        }
        return out;
    }

    /**
     * Whether {@code row}, read after the statement left its write out, still passes the write's fence: then
     * the fence did not refuse it, the row was skipped as locked ({@link #fenced}), and the write is
     * {@link FencedWrite.Held}. Read after the statement, the row may have been let go meanwhile; then the
     * fence refused it, or will when the write is made again, which is just as exact.
     */
    private static boolean stillCarries(Job row, FencingToken token) {
        return row.state() == JobState.RUNNING && row.attempts() == token.attempt()
                && row.lockedBy().filter(token.worker()::equals).isPresent();
    }

    /** SQLSTATE class 22 (data exception) or 54 (program limit exceeded): the value, not the database, is at fault. */
    private static boolean isRefusedValue(DataAccessException e) {
        String state = StoreErrors.sqlState(e);
        return state != null && (state.startsWith("22") || state.startsWith("54"));
    }
}
