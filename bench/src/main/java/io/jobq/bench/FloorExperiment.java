package io.jobq.bench;

import io.jobq.postgres.LockMode;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Experiment 5, the floor: the store's own claim and complete statements driven by a bare JDBC loop
 * per worker (one platform thread, one auto-commit connection, no pool, no worker runtime, no handler
 * dispatch, no heartbeat or maintenance): claim up to b jobs, complete each, repeat until a claim
 * comes back empty. Same jobs, worker counts and batch sizes as {@link ThroughputExperiment}; the
 * report divides jobq's jobs/s by this one, cell by cell.
 */
final class FloorExperiment {

    /**
     * {@code PostgresJobStore.CLAIM} with fair order on one queue, as the store renders it; the two
     * must stay in step, or the floor measures something else ({@code FloorStatementsTest} compares them
     * with what the store sends to the driver). Binds: queue, limit, worker, lease ms. {@code %s} is the
     * lock clause's tail: {@link #claimSql(ClaimStrategy)}.
     */
    static final String CLAIM = """
            WITH picked AS MATERIALIZED (
                SELECT id FROM jobq.jobs
                WHERE state = 'queued' AND queue = ?
                ORDER BY vtime, id
                LIMIT ?
                FOR UPDATE%s
            )
            UPDATE jobq.jobs j
            SET state = 'running', attempts = j.attempts + 1, locked_by = ?,
                locked_until = now() + ?::float8 * interval '1 millisecond', started_at = now()
            FROM picked WHERE j.id = picked.id
            RETURNING j.*""";

    /**
     * {@code PostgresJobStore.complete} without a result (a no-op job's): the fenced UPDATE, verbatim as
     * jOOQ renders the store's {@code markDone}, returning the row the store maps to the job it reports.
     * The store builds it with jOOQ's DSL, so a hand-written equivalent would be a different statement
     * (other casts, other binds, {@code *} for the column list); the floor runs the very same text
     * instead, and {@code FloorStatementsTest} fails, showing the new text, when a change to the store
     * or to jOOQ renders it differently. Binds: {@code 'done'}, result (NULL as VARCHAR), locked_by and
     * locked_until (likewise), id, worker, attempt, {@code 'running'}: {@link #loop} binds them as jOOQ does.
     */
    static final String COMPLETE = "update \"jobq\".\"jobs\" set \"state\" = ?, \"result\" = cast(? as jsonb), "
            + "\"last_error\" = \"jobq\".\"jobs\".\"last_error\", \"finished_at\" = cast(current_timestamp as timestamp with time zone), "
            + "\"locked_by\" = ?, \"locked_until\" = cast(? as timestamp(6) with time zone) "
            + "where (\"jobq\".\"jobs\".\"id\" = ? and \"jobq\".\"jobs\".\"locked_by\" = ? and \"jobq\".\"jobs\".\"attempts\" = ? "
            + "and \"jobq\".\"jobs\".\"state\" = ?) "
            + "returning \"jobq\".\"jobs\".\"id\", \"jobq\".\"jobs\".\"queue\", \"jobq\".\"jobs\".\"tenant\", \"jobq\".\"jobs\".\"task\", "
            + "\"jobq\".\"jobs\".\"payload\", \"jobq\".\"jobs\".\"result\", \"jobq\".\"jobs\".\"state\", \"jobq\".\"jobs\".\"vtime\", "
            + "\"jobq\".\"jobs\".\"run_at\", \"jobq\".\"jobs\".\"attempts\", \"jobq\".\"jobs\".\"max_attempts\", "
            + "\"jobq\".\"jobs\".\"locked_by\", \"jobq\".\"jobs\".\"locked_until\", \"jobq\".\"jobs\".\"last_error\", "
            + "\"jobq\".\"jobs\".\"idempotency_key\", \"jobq\".\"jobs\".\"created_at\", \"jobq\".\"jobs\".\"started_at\", "
            + "\"jobq\".\"jobs\".\"finished_at\"";

    /** The lease the floor's claims take, as jobq's default: 30 s. */
    static final long LEASE_MS = 30_000;

    private final BenchDatabase db;
    private final Plan plan;
    private final Progress progress;

    FloorExperiment(BenchDatabase db, Plan plan, Progress progress) {
        this.db = db;
        this.plan = plan;
        this.progress = progress;
    }

    List<Cell> run() {
        return Cell.measure(plan, progress, "floor %s, %d loop(s)", this::runOnce);
    }

    private double runOnce(ClaimStrategy s, int loops, AtomicLong claims, AtomicLong claimed) {
        db.reset();
        int n = plan.throughputJobs();
        NoopJobs.enqueue(db, n);
        String claimSql = claimSql(s);
        List<Connection> connections = new ArrayList<>();
        AtomicLong completed = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        try {
            for (int i = 0; i < loops; i++) connections.add(db.connect());
            for (int i = 0; i < loops; i++) {
                Connection c = connections.get(i);
                String worker = "floor-" + i;
                threads.add(Thread.ofPlatform().name(worker).start(() -> {
                    try {
                        go.await();
                        loop(c, claimSql, COMPLETE, worker, s.batch, completed, claims, claimed);
                    } catch (Throwable t) {
                        failure.compareAndSet(null, t);
                    }
                }));
            }
            long start = System.nanoTime();
            go.countDown();
            for (Thread t : threads) t.join();
            long end = System.nanoTime();
            if (failure.get() != null) throw new BenchException("floor loop failed: " + failure.get(), failure.get());
            if (completed.get() != n) throw new BenchException("floor completed " + completed.get() + " of " + n + " jobs");
            return n / ((end - start) / 1e9);
        } catch (SQLException e) {
            throw new BenchException("floor could not connect: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BenchException("interrupted");
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

    /** {@link #CLAIM} for one strategy: {@code FOR UPDATE}, with {@code SKIP LOCKED} when the strategy skips. */
    static String claimSql(ClaimStrategy s) {
        return CLAIM.formatted(s.lockMode == LockMode.SKIP_LOCKED ? " SKIP LOCKED" : "");
    }

    /**
     * One worker's loop: claim up to {@code batch} jobs, complete each, until a claim comes back empty.
     * The statements are parameters only so that {@code FloorStatementsTest} can show a drifted one is
     * caught; the experiment always passes {@link #claimSql(ClaimStrategy)} and {@link #COMPLETE}.
     * Binds that never change are set once, as a prepared statement keeps them across executions.
     */
    static void loop(Connection c, String claimSql, String completeSql, String worker, int batch, AtomicLong completed,
                     AtomicLong claims, AtomicLong claimed) throws SQLException {
        try (PreparedStatement claim = c.prepareStatement(claimSql); PreparedStatement complete = c.prepareStatement(completeSql)) {
            claim.setString(1, "default");
            claim.setInt(2, batch);
            claim.setString(3, worker);
            claim.setLong(4, LEASE_MS);
            // jOOQ binds these as values, not literals, and its NULLs as VARCHAR: the same here.
            complete.setString(1, "done");
            complete.setNull(2, Types.VARCHAR);
            complete.setNull(3, Types.VARCHAR);
            complete.setNull(4, Types.VARCHAR);
            complete.setString(6, worker);
            complete.setString(8, "running");
            long[] ids = new long[batch];
            int[] attempts = new int[batch];
            while (true) {
                int got = 0;
                try (ResultSet rs = claim.executeQuery()) {
                    while (rs.next()) {
                        ids[got] = rs.getLong("id");
                        attempts[got] = rs.getInt("attempts");
                        got++;
                    }
                }
                if (got == 0) return; // drained: every job was queued before the start
                claims.incrementAndGet();
                claimed.addAndGet(got);
                for (int i = 0; i < got; i++) {
                    complete.setLong(5, ids[i]);
                    complete.setInt(7, attempts[i]);
                    try (ResultSet rs = complete.executeQuery()) {
                        if (!rs.next()) throw new SQLException("complete of job " + ids[i] + " was refused by its fence");
                    }
                    completed.incrementAndGet();
                }
            }
        }
    }
}
