package io.jobq.bench;

import com.zaxxer.hikari.HikariDataSource;
import io.jobq.application.worker.HandlerRegistry;
import io.jobq.application.worker.Worker;
import io.jobq.application.worker.WorkerListener;
import io.jobq.application.worker.WorkerSettings;
import io.jobq.domain.lease.WorkerId;
import io.jobq.postgres.PostgresJobStore;
import io.jobq.postgres.PostgresWakeupChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * N in-process jobq {@link Worker}s, each with its own connection pool and store, so workers never
 * share a connection (as separate worker processes would not). Built first and started together, so
 * a timed run never includes connecting.
 */
final class WorkerGroup implements AutoCloseable {
    private final List<Worker> workers = new ArrayList<>();
    private final List<HikariDataSource> pools = new ArrayList<>();

    /**
     * @param poolSize connections per worker: its claims and outcome writes, heartbeat and maintenance
     * @param settings each worker's settings; its id is replaced by {@code name-i}
     */
    WorkerGroup(BenchDatabase db, String name, int count, int poolSize, PostgresJobStore.Options options,
                HandlerRegistry handlers, WorkerSettings settings, WorkerListener listener) {
        try {
            pools.addAll(openPools(db, name, count, poolSize));
            for (int i = 0; i < count; i++) {
                HikariDataSource pool = pools.get(i);
                Worker.Builder b = Worker.builder(new PostgresJobStore(pool, options), handlers)
                        .settings(settings.toBuilder().workerId(new WorkerId(name + "-" + i)).build())
                        .listener(listener);
                if (settings.listen()) b.wakeups(new PostgresWakeupChannel(db.jdbcUrl(), pool));
                workers.add(b.build());
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /**
     * The workers' pools, opened side by side: each opens all its connections before it is returned (see
     * {@link BenchDatabase#pool}), one at a time, and 16 pools one after the other took seconds per run.
     */
    private static List<HikariDataSource> openPools(BenchDatabase db, String name, int count, int poolSize) {
        List<Future<HikariDataSource>> futures = new ArrayList<>();
        // close() waits for every task (if interrupted, it interrupts them and still waits): all are done after it
        try (var openers = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < count; i++) {
                String poolName = "bench-" + name + "-" + i;
                futures.add(openers.submit(() -> db.pool(poolName, poolSize)));
            }
        }
        List<HikariDataSource> opened = new ArrayList<>();
        BenchException failed = null;
        for (Future<HikariDataSource> f : futures) {
            if (f.state() == Future.State.SUCCESS) {
                opened.add(f.resultNow());
                continue;
            }
            Throwable why = f.state() == Future.State.FAILED ? f.exceptionNow() : new InterruptedException("cancelled");
            if (failed == null) failed = new BenchException("opening a worker's pool failed: " + why.getMessage(), why);
            else failed.addSuppressed(why);
        }
        if (failed != null) {
            for (HikariDataSource p : opened) p.close();
            throw failed;
        }
        return opened;
    }

    void start() {
        for (Worker w : workers) w.start();
    }

    /** Closes every worker at once (each waits for its own in-hand jobs), then the pools. */
    @Override
    public void close() {
        List<Thread> closers = new ArrayList<>();
        for (Worker w : workers) closers.add(Thread.ofVirtual().start(w::close));
        for (Thread t : closers) {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        for (HikariDataSource p : pools) p.close();
    }
}
