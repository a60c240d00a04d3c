package io.jobq.bench;

import io.jobq.postgres.PostgresWakeupChannel;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongConsumer;
import org.postgresql.PGConnection;

/**
 * The pickup floor: the least a LISTEN/NOTIFY queue can take from enqueue to start on this machine, measured
 * with the same arrivals as {@link LatencyExperiment}, so that its rows read against this one. A bare JDBC
 * loop: the producer INSERTs the floor's row ({@link EnqueueExperiment#INSERT_ONE}) and NOTIFYs in one
 * auto-commit statement on a connection of its own; one listener thread, on a dedicated connection opened as
 * jobq opens its listener's ({@link PostgresWakeupChannel#openListenConnection}), claims at once, on the same thread, with the
 * floor's claim ({@link FloorExperiment#CLAIM}, one job, SKIP LOCKED) on a second connection of its own. A
 * sample runs from just before the INSERT to the claimed row read. No pool, no jOOQ, no hand-off between
 * threads, no fair tag: what is left is the database's and the driver's. Its own channel, so nothing of
 * jobq's wakes.
 */
final class PickupFloor {
    static final String MECHANISM = "floor: bare JDBC, NOTIFY + claim";
    private static final String CHANNEL = "jobq_bench_pickup_floor";
    static final String ENQUEUE = "WITH i AS (" + EnqueueExperiment.INSERT_ONE + " RETURNING id) "
            + "SELECT i.id, pg_notify('" + CHANNEL + "', 'default') FROM i";

    private final BenchDatabase db;
    private final Plan plan;
    private final Progress progress;
    private final long seed;

    PickupFloor(BenchDatabase db, Plan plan, Progress progress, long seed) {
        this.db = db;
        this.plan = plan;
        this.progress = progress;
        this.seed = seed;
    }

    LatencyExperiment.Result run() {
        db.reset();
        db.execute("INSERT INTO tenants (queue, tenant) VALUES ('default', 'default')"); // the floor's rows need it
        LatencyExperiment.settle(db, progress);
        Map<Long, Long> started = new ConcurrentHashMap<>();
        List<Double> samples = new ArrayList<>();
        try (Connection producer = DriverManager.getConnection(db.jdbcUrl());
                PreparedStatement enqueue = producer.prepareStatement(ENQUEUE);
                Listener listener = new Listener(db.jdbcUrl(), id -> started.putIfAbsent(id, System.nanoTime()))) {
            listener.start();
            for (int i = 0; i < LatencyExperiment.WARM_UP; i++) enqueue(enqueue);
            Waits.until(() -> {
                listener.failFast();
                return started.size() >= LatencyExperiment.WARM_UP;
            }, Duration.ofMillis(20), Duration.ofSeconds(60), "the floor's warm-up jobs");
            progress.step("latency floor: warmed up; %d jobs arriving %d-%d ms apart (seed %d)", plan.latencyJobs(),
                    plan.latencyGapMinMs(), plan.latencyGapMaxMs(), seed);
            Map<Long, Long> enqueued = LatencyExperiment.arrivals(plan, seed, () -> enqueue(enqueue));
            Waits.until(() -> {
                listener.failFast();
                return started.keySet().containsAll(enqueued.keySet());
            }, Duration.ofMillis(20), Duration.ofSeconds(30), "every floor job to be claimed");
            enqueued.forEach((id, before) -> samples.add((started.get(id) - before) / 1e6));
        } catch (SQLException e) {
            throw new BenchException("the pickup floor failed: " + e.getMessage(), e);
        }
        LatencyExperiment.Result r = new LatencyExperiment.Result(MECHANISM, Percentiles.of(samples));
        progress.step("latency floor: p50 %s, p95 %s, max %s", Format.millis(r.latencyMs().p50()),
                Format.millis(r.latencyMs().p95()), Format.millis(r.latencyMs().max()));
        return r;
    }

    private static long enqueue(PreparedStatement enqueue) throws SQLException {
        try (ResultSet rs = enqueue.executeQuery()) {
            if (!rs.next()) throw new IllegalStateException("the floor's INSERT returned no row");
            return rs.getLong(1);
        }
    }

    /** The listener thread: waits for a notification, then claims on the same thread until a claim is empty. */
    private static final class Listener implements AutoCloseable {
        private final Connection listen;
        private final Connection claimer;
        private final PreparedStatement claim;
        private final LongConsumer claimed;
        private final Thread thread;
        private volatile boolean running = true;
        private volatile Throwable failure;

        Listener(String url, LongConsumer claimed) throws SQLException {
            this.claimed = claimed;
            this.listen = PostgresWakeupChannel.openListenConnection(url);
            try {
                this.claimer = DriverManager.getConnection(url);
                try {
                    this.claim = claimer.prepareStatement(FloorExperiment.claimSql(ClaimStrategy.SKIP_LOCKED));
                    claim.setString(1, "default");
                    claim.setString(2, "pickup-floor");
                    claim.setLong(3, FloorExperiment.LEASE_MS);
                    try (Statement st = listen.createStatement()) {
                        st.execute("LISTEN " + CHANNEL);
                    }
                } catch (SQLException | RuntimeException e) {
                    claimer.close();
                    throw e;
                }
            } catch (SQLException | RuntimeException e) {
                listen.close();
                throw e;
            }
            this.thread = Thread.ofPlatform().daemon().name("pickup-floor-listener").unstarted(this::loop);
        }

        void start() {
            thread.start();
        }

        /** Throws what ended the listener thread, if anything did: a wait for its claims stops at once. */
        void failFast() {
            Throwable f = failure;
            if (f != null) throw new BenchException("the pickup floor's listener failed: " + f, f);
        }

        private void loop() {
            try {
                PGConnection pg = listen.unwrap(PGConnection.class);
                while (running) {
                    var notifications = pg.getNotifications(250);
                    if (notifications == null || notifications.length == 0) continue;
                    for (boolean more = true; more; ) {
                        more = false;
                        try (ResultSet rs = claim.executeQuery()) {
                            while (rs.next()) {
                                claimed.accept(rs.getLong("id"));
                                more = true;
                            }
                        }
                    }
                }
            } catch (Throwable e) {
                if (running) failure = e;
            }
        }

        @Override
        public void close() throws SQLException {
            running = false;
            try {
                thread.join(Duration.ofSeconds(5));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            try (listen; claimer) {
                failFast();
            }
        }
    }
}
