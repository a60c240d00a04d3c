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
            for (int i = 0; i < count; i++) {
                HikariDataSource pool = db.pool("bench-" + name + "-" + i, poolSize);
                pools.add(pool);
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
