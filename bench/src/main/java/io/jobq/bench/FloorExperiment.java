package io.jobq.bench;

import io.jobq.postgres.LockMode;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
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
     * must stay in step, or the floor measures something else. Binds: queue, limit, worker, lease ms.
     */
    static final String CLAIM = """
            WITH picked AS MATERIALIZED (
                SELECT id FROM jobs
                WHERE state = 'queued' AND queue = ?
                ORDER BY vtime, id
                LIMIT ?
                FOR UPDATE%s
            )
            UPDATE jobs j
            SET state = 'running', attempts = j.attempts + 1, locked_by = ?,
                locked_until = now() + ?::float8 * interval '1 millisecond', started_at = now()
            FROM picked WHERE j.id = picked.id
            RETURNING j.*""";

    /**
     * {@code PostgresJobStore.complete}: the fenced UPDATE, returning the row (the store maps it to the
     * job it reports). Binds: id, worker, attempt.
     */
    static final String COMPLETE = """
            UPDATE jobs SET state = 'done', result = NULL, finished_at = current_timestamp,
                            locked_by = NULL, locked_until = NULL
            WHERE id = ? AND locked_by = ? AND attempts = ? AND state = 'running'
            RETURNING *""";

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
        List<Cell> cells = new ArrayList<>();
        for (ClaimStrategy s : ClaimStrategy.values()) {
            for (int w : plan.workerCounts()) {
                List<Double> rates = new ArrayList<>();
                AtomicLong claims = new AtomicLong();
                AtomicLong claimed = new AtomicLong();
                for (int r = 1; r <= plan.runs(); r++) {
                    double rate = runOnce(s, w, claims, claimed);
                    rates.add(rate);
                    progress.step("floor %s, %d loop(s), run %d/%d: %s jobs/s", s.label, w, r, plan.runs(), Format.rate(rate));
                }
                cells.add(new Cell(s, w, rates, claims.get() == 0 ? 0 : (double) claimed.get() / claims.get()));
            }
        }
        return cells;
    }

    private double runOnce(ClaimStrategy s, int loops, AtomicLong claims, AtomicLong claimed) {
        db.reset();
        int n = plan.throughputJobs();
        NoopJobs.enqueue(db, n);
        String claimSql = CLAIM.formatted(s.lockMode == LockMode.SKIP_LOCKED ? " SKIP LOCKED" : "");
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
                        loop(c, claimSql, worker, s.batch, completed, claims, claimed);
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

    private static void loop(Connection c, String claimSql, String worker, int batch, AtomicLong completed,
                             AtomicLong claims, AtomicLong claimed) throws SQLException {
        try (PreparedStatement claim = c.prepareStatement(claimSql); PreparedStatement complete = c.prepareStatement(COMPLETE)) {
            claim.setString(1, "default");
            claim.setInt(2, batch);
            claim.setString(3, worker);
            claim.setLong(4, LEASE_MS);
            complete.setString(2, worker);
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
                    complete.setLong(1, ids[i]);
                    complete.setInt(3, attempts[i]);
                    try (ResultSet rs = complete.executeQuery()) {
                        if (!rs.next()) throw new SQLException("complete of job " + ids[i] + " was refused by its fence");
                    }
                    completed.incrementAndGet();
                }
            }
        }
    }
}
