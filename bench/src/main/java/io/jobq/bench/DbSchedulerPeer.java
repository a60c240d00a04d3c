package io.jobq.bench;

import com.github.kagkarlsson.scheduler.Scheduler;
import com.github.kagkarlsson.scheduler.SchedulerClient;
import com.github.kagkarlsson.scheduler.task.TaskInstance;
import com.github.kagkarlsson.scheduler.task.helper.OneTimeTask;
import com.github.kagkarlsson.scheduler.task.helper.Tasks;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * db-scheduler in the peer comparison: a one-time task "noop" whose handler does nothing, one
 * {@link Scheduler} with {@code threads(c)} and the lock-and-fetch polling strategy (one
 * {@code SELECT … FOR UPDATE SKIP LOCKED} that marks a batch picked), which its README suggests for
 * high throughput on PostgreSQL. A one-time task's execution row is deleted when it completes, so
 * the drain ends when {@code scheduled_tasks} is empty.
 */
final class DbSchedulerPeer implements PeerSystem {
    /**
     * The table db-scheduler needs (its documentation has one per database; the jar does not create
     * it): the columns its 16.x repository reads and writes, its primary key and the indexes of its
     * PostgreSQL definition.
     */
    static final String TABLE = """
            CREATE TABLE scheduled_tasks (
                task_name            text        NOT NULL,
                task_instance        text        NOT NULL,
                task_data            bytea,
                execution_time       timestamptz NOT NULL,
                picked               boolean     NOT NULL,
                picked_by            text,
                last_success         timestamptz,
                last_failure         timestamptz,
                consecutive_failures int,
                last_heartbeat       timestamptz,
                version              bigint      NOT NULL,
                priority             smallint,
                PRIMARY KEY (task_name, task_instance)
            );
            CREATE INDEX execution_time_idx ON scheduled_tasks (execution_time);
            CREATE INDEX last_heartbeat_idx ON scheduled_tasks (last_heartbeat);
            CREATE INDEX priority_execution_time_idx ON scheduled_tasks (priority DESC, execution_time ASC)""";

    /** Lock-and-fetch: fetch again when fewer than half the threads are busy, up to one job per thread. */
    static final double LOWER_LIMIT = 0.5;
    static final double UPPER_LIMIT = 1.0;
    static final Duration POLLING_INTERVAL = Duration.ofSeconds(1);

    private final BenchDatabase db;

    DbSchedulerPeer(BenchDatabase db) {
        this.db = db;
    }

    @Override
    public String name() {
        return "db-scheduler " + PeerSystem.version("db-scheduler");
    }

    @Override
    public String settings(int concurrency) {
        return "one Scheduler, threads " + concurrency + ", pollUsingLockAndFetch(" + LOWER_LIMIT + ", " + UPPER_LIMIT
                + "), pollingInterval " + POLLING_INTERVAL.toMillis() + " ms, pool " + OneWorker.poolSize(concurrency)
                + ", one-time task (row deleted on completion)";
    }

    @Override
    public Drain drain(int jobs, int concurrency) {
        try (BenchDatabase.Sibling own = db.createSibling("dbscheduler");
             HikariDataSource pool = own.pool("bench-dbscheduler", OneWorker.poolSize(concurrency))) {
            execute(pool, TABLE);
            AtomicLong ran = new AtomicLong();
            AtomicLong firstJob = new AtomicLong();
            OneTimeTask<Void> task = Tasks.oneTime("noop").execute((instance, context) -> {
                firstJob.compareAndSet(0, System.nanoTime());
                ran.incrementAndGet();
            });
            enqueue(SchedulerClient.Builder.create(pool, task).build(), task, jobs);
            execute(pool, "VACUUM ANALYZE scheduled_tasks");
            Scheduler scheduler = Scheduler.create(pool, task).threads(concurrency)
                    .pollUsingLockAndFetch(LOWER_LIMIT, UPPER_LIMIT).pollingInterval(POLLING_INTERVAL)
                    .shutdownMaxWait(Duration.ofSeconds(10)).build();
            long start = System.nanoTime();
            long end;
            try {
                scheduler.start();
                end = Waits.drained(ran::get, jobs, () -> remaining(pool) == 0, Duration.ofMinutes(15), "db-scheduler");
            } finally {
                scheduler.stop();
            }
            if (ran.get() != jobs) throw new BenchException("db-scheduler ran " + ran.get() + " executions for " + jobs + " jobs");
            return Drain.timed(jobs, start, firstJob.get(), end, Double.NaN);
        }
    }

    /** Schedules the jobs, due a second ago, 1,000 per batch insert. */
    private static void enqueue(SchedulerClient client, OneTimeTask<Void> task, int jobs) {
        Instant due = Instant.now().minusSeconds(1);
        for (int first = 0; first < jobs; first += 1000) {
            List<TaskInstance<?>> batch = new ArrayList<>();
            for (int i = first; i < Math.min(jobs, first + 1000); i++) batch.add(task.instance("job-" + i));
            client.scheduleBatch(batch, due);
        }
    }

    private static long remaining(HikariDataSource pool) {
        try (Connection c = pool.getConnection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT count(*) FROM scheduled_tasks")) {
            rs.next();
            return rs.getLong(1);
        } catch (SQLException e) {
            throw new BenchException("db-scheduler: cannot count executions: " + e.getMessage(), e);
        }
    }

    static void execute(HikariDataSource pool, String sql) {
        try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
            st.execute(sql);
        } catch (SQLException e) {
            throw new BenchException("peer SQL failed: " + sql + ": " + e.getMessage(), e);
        }
    }
}
