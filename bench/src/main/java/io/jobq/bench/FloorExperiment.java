package io.jobq.bench;

import io.jobq.postgres.LockMode;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.IntFunction;

/**
 * Experiment 5, the floor: the store's own claim and outcome statements driven by a bare JDBC loop
 * per worker (one platform thread, one auto-commit connection, no pool, no worker runtime, no handler
 * dispatch, no heartbeat or maintenance): claim up to b jobs, complete them in one statement, repeat
 * until a claim comes back empty: two commits per claim, the least a queue with leases can do. Same jobs, worker counts and batch sizes as {@link ThroughputExperiment}; the
 * report divides jobq's jobs/s by this one, cell by cell.
 */
record FloorExperiment(BenchDatabase db, Plan plan, Progress progress) {

    /**
     * {@code PostgresJobStore.CLAIM} with fair order on one queue, as the store renders it; the two
     * must stay in step, or the floor measures something else ({@code FloorStatementsTest} compares them
     * with what the store sends to the driver). Binds: queue, worker, lease ms. {@code %d} is the limit
     * (written into the text, as the store writes it, so that PostgreSQL caches one generic plan), {@code %s}
     * the lock clause's tail: {@link #claimSql(ClaimStrategy)}.
     */
    static final String CLAIM = """
            WITH picked AS MATERIALIZED (
                SELECT id FROM jobq.jobs
                WHERE state = 'queued' AND queue = ?
                ORDER BY vtime, id
                LIMIT %d
                FOR UPDATE%s
            )
            UPDATE jobq.jobs j
            SET state = 'running', attempts = j.attempts + 1, locked_by = ?,
                locked_until = now() + ?::float8 * interval '1 millisecond', started_at = now()
            FROM picked WHERE j.id = picked.id
            RETURNING j.*""";

    /**
     * The head of the store's outcome statement ({@code OutcomeStatement}, which a worker's flush sends for a
     * batch of outcomes), as jOOQ renders it for two or more ({@link #completeSql(ClaimStrategy, int)}): the floor completes everything one claim took in ONE
     * execution, as a busy worker's batched completion does. {@code FloorStatementsTest} compares it, binds
     * included, with what the store sends. Binds, each an array literal with one element per job bound as jOOQ
     * binds arrays ({@code setObject(text, Types.OTHER)}): ids, workers, attempts, states, results,
     * errors, retry delays.
     */
    private static final String OUTCOMES = """
            WITH o AS MATERIALIZED (
                SELECT *, 'running'::text AS running
                FROM unnest(cast(? as bigint[])::bigint[], cast(? as varchar[])::text[], cast(? as int[])::int[], cast(? as varchar[])::text[], cast(? as varchar[])::text[], cast(? as varchar[])::text[], cast(? as double precision[])::float8[])
                    AS o(id, worker, attempt, state, result, last_error, retry_ms)
            ), """;

    /** {@link #OUTCOMES} as the store sends it for ONE outcome: the same binds, read by subscript. */
    private static final String ONE_OUTCOME = """
            WITH o AS MATERIALIZED (
                SELECT (cast(? as bigint[])::bigint[])[1] AS id, (cast(? as varchar[])::text[])[1] AS worker, (cast(? as int[])::int[])[1] AS attempt,
                    (cast(? as varchar[])::text[])[1] AS state, (cast(? as varchar[])::text[])[1] AS result, (cast(? as varchar[])::text[])[1] AS last_error,
                    (cast(? as double precision[])::float8[])[1] AS retry_ms, 'running'::text AS running
            ), """;

    /** What the two forms of the outcome statement share, after their {@code o}: the fence, the lock, the update. */
    private static final String FENCED_UPDATE = """
            fenced AS (
                SELECT j.id, CASE WHEN j.cancel_requested AND o.state <> 'done' THEN 'cancelled' ELSE o.state END AS state
                FROM jobq.jobs j JOIN o ON j.id = o.id
                WHERE j.locked_by = o.worker AND j.attempts = o.attempt AND j.state = o.running
                %s
            )
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
     * The outcome statement for {@code n} outcomes, as the store sends it beside claims of strategy {@code s}:
     * waiting for a held row, in id order, under every strategy (with {@code SKIP LOCKED} claims the store
     * bounds that wait by {@code lock_timeout} and then skips the row, which no transaction of the floor's
     * holds for long).
     */
    static String completeSql(ClaimStrategy s, int n) {
        return (n == 1 ? ONE_OUTCOME : OUTCOMES) + FENCED_UPDATE.formatted("ORDER BY j.id\n                FOR NO KEY UPDATE OF j");
    }

    /** {@link #completeSql(ClaimStrategy, int)} for {@code s}, by the number of outcomes. */
    static IntFunction<String> completeSql(ClaimStrategy s) {
        return n -> completeSql(s, n);
    }

    /** Executes {@code complete}: the rows it completed. */
    private static int completeAll(PreparedStatement complete) throws SQLException {
        int done = 0;
        try (ResultSet rs = complete.executeQuery()) {
            while (rs.next()) done++;
        }
        return done;
    }

    /** The lease the floor's claims take, as jobq's default: 30 s. */
    static final long LEASE_MS = 30_000;

    /** How its progress lines name a run. */
    static final String PROGRESS = "floor %s, %d loop(s)";

    List<Cell> run() {
        return Cell.measure(plan, progress, PROGRESS, this::runOnce);
    }

    double runOnce(ClaimStrategy s, int loops, AtomicLong claims, AtomicLong claimed) {
        db.reset();
        int n = plan.throughputJobs();
        NoopJobs.enqueueAfresh(db, n);
        String claimSql = claimSql(s);
        List<Connection> connections = new ArrayList<>();
        AtomicLong completed = new AtomicLong();
        AtomicBoolean stop = new AtomicBoolean();
        try {
            List<StartingGun.Loop> workers = new ArrayList<>();
            for (int i = 0; i < loops; i++) {
                Connection c = db.connect();
                connections.add(c);
                String worker = "floor-" + i;
                workers.add(() -> loop(c, claimSql, completeSql(s), worker, s.batch, completed, claims, claimed, stop::get));
            }
            StartingGun.Timed t = StartingGun.timeBoxed("floor loop", workers, plan.throughputBox(), completed::get,
                    () -> stop.set(true));
            if (!stop.get() && completed.get() != n) throw new BenchException("floor completed " + completed.get() + " of " + n + " jobs");
            return t.count() / (t.nanos() / 1e9);
        } catch (SQLException e) {
            throw new BenchException("floor could not connect: " + e.getMessage(), e);
        } finally {
            for (Connection c : connections) {
                try {
                    c.close();
                } catch (SQLException ignored) {
                    // closing anyway
                }
            }
        }
    }

    /**
     * {@link #CLAIM} for one strategy: its batch as the limit; {@code FOR UPDATE}, with {@code SKIP LOCKED}
     * when the strategy skips.
     */
    static String claimSql(ClaimStrategy s) {
        return CLAIM.formatted(s.batch, s.lockMode == LockMode.SKIP_LOCKED ? " SKIP LOCKED" : "");
    }

    /**
     * One worker's loop: claim up to {@code batch} jobs, complete them all in one statement, until a claim
     * comes back empty or {@code stopped} holds (checked before each claim: a run's time box is over). The
     * statements are parameters only so that {@code FloorStatementsTest} can show a drifted one is caught; the
     * experiment always passes {@link #claimSql(ClaimStrategy)} and {@link #completeSql} (outcome statement
     * for n outcomes). Binds that never change are set once, as a prepared statement keeps them.
     * (With {@code SKIP LOCKED} claims the store sends its outcomes and next claim as one text that also bounds
     * its lock waits and commits; the floor keeps the two statements and their two commits.)
     */
    static void loop(Connection c, String claimSql, IntFunction<String> completeSql, String worker, int batch,
                     AtomicLong completed, AtomicLong claims, AtomicLong claimed, BooleanSupplier stopped) throws SQLException {
        // Both forms of the outcome statement, as the store has both: for one outcome, and for more.
        try (PreparedStatement claim = c.prepareStatement(claimSql); PreparedStatement completeOne = c.prepareStatement(completeSql.apply(1));
             PreparedStatement completeMany = c.prepareStatement(completeSql.apply(2))) {
            claim.setString(1, "default");
            claim.setString(2, worker);
            claim.setLong(3, LEASE_MS);
            List<String> ids = new ArrayList<>(batch);
            List<String> attempts = new ArrayList<>(batch);
            while (!stopped.getAsBoolean()) {
                ids.clear();
                attempts.clear();
                try (ResultSet rs = claim.executeQuery()) {
                    while (rs.next()) {
                        ids.add(Long.toString(rs.getLong("id")));
                        attempts.add(Integer.toString(rs.getInt("attempts")));
                    }
                }
                int got = ids.size();
                if (got == 0) return; // drained: every job was queued before the start
                claims.incrementAndGet();
                claimed.addAndGet(got);
                PreparedStatement complete = got == 1 ? completeOne : completeMany;
                complete.setObject(1, arrayLiteral(ids), Types.OTHER);
                complete.setObject(2, arrayLiteral(java.util.Collections.nCopies(got, quoted(worker))), Types.OTHER);
                complete.setObject(3, arrayLiteral(attempts), Types.OTHER);
                complete.setObject(4, arrayLiteral(java.util.Collections.nCopies(got, quoted("done"))), Types.OTHER);
                String nulls = arrayLiteral(java.util.Collections.nCopies(got, "null"));
                for (int p = 5; p <= 7; p++) complete.setObject(p, nulls, Types.OTHER);
                int done = completeAll(complete);
                if (done != got) throw new SQLException("the fence refused " + (got - done) + " of " + got + " completions");
                completed.addAndGet(done);
            }
        }
    }

    /** A PostgreSQL array literal of already-formatted elements, as jOOQ writes one: {@code {1,2}}. */
    private static String arrayLiteral(List<String> elements) {
        return "{" + String.join(",", elements) + "}";
    }

    /** An array element quoted as jOOQ quotes text (worker names and states hold no quote or backslash). */
    private static String quoted(String text) {
        return "\"" + text + "\"";
    }
}
