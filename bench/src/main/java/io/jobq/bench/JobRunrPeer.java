package io.jobq.bench;

import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import org.jobrunr.jobs.lambdas.JobRequest;
import org.jobrunr.jobs.lambdas.JobRequestHandler;
import org.jobrunr.jobs.mappers.JobMapper;
import org.jobrunr.scheduling.JobRequestScheduler;
import org.jobrunr.server.BackgroundJobServer;
import org.jobrunr.server.BackgroundJobServerConfiguration;
import org.jobrunr.server.JobActivator;
import org.jobrunr.storage.sql.postgres.PostgresStorageProvider;
import org.jobrunr.utils.mapper.jackson.JacksonJsonMapper;

/**
 * JobRunr in the peer comparison: its JobRequest API (a serialisable request and a handler, no
 * lambda analysis), PostgreSQL storage that creates its own tables, and one
 * {@link BackgroundJobServer} with {@code workerCount(c)}. Built without the static
 * {@code JobRunr.configure()} facade, so each run gets a server and storage of its own.
 * The drain ends when every job's row says SUCCEEDED.
 */
public final class JobRunrPeer implements PeerSystem {
    /**
     * JobRunr's poll interval: how often a server looks for work while it has free workers. The
     * shortest it accepts is 5 s; a busy server asks for more work as workers free up, not only per poll.
     */
    static final Duration POLL_INTERVAL = Duration.ofSeconds(5);

    private final BenchDatabase db;

    JobRunrPeer(BenchDatabase db) {
        this.db = db;
    }

    /** The job: one int, as JobRunr stores requests as JSON. */
    public record NoopRequest(int n) implements JobRequest {
        @Override
        public Class<NoopHandler> getJobRequestHandler() {
            return NoopHandler.class;
        }
    }

    /** Counts runs; does nothing else. JobRunr gets this one instance from the bench's JobActivator. */
    public static final class NoopHandler implements JobRequestHandler<NoopRequest> {
        private final AtomicLong ran = new AtomicLong();
        private final AtomicLong firstJob = new AtomicLong();

        @Override
        public void run(NoopRequest request) {
            firstJob.compareAndSet(0, System.nanoTime());
            ran.incrementAndGet();
        }
    }

    @Override
    public String name() {
        return "JobRunr " + PeerSystem.version("jobrunr");
    }

    @Override
    public String settings(int concurrency) {
        return "one BackgroundJobServer, workerCount " + concurrency + ", poll interval " + POLL_INTERVAL.toSeconds()
                + " s, pool " + OneWorker.poolSize(concurrency) + ", JobRequest API, Jackson, PostgresStorageProvider";
    }

    @Override
    public Drain drain(int jobs, int concurrency) {
        try (BenchDatabase.Sibling own = db.createSibling("jobrunr");
             HikariDataSource pool = own.pool("bench-jobrunr", OneWorker.poolSize(concurrency))) {
            JacksonJsonMapper json = new JacksonJsonMapper();
            PostgresStorageProvider storage = new PostgresStorageProvider(pool);
            storage.setJobMapper(new JobMapper(json));
            NoopHandler handler = new NoopHandler();
            JobActivator activator = new JobActivator() {
                @Override
                public <T> T activateJob(Class<T> type) {
                    return type.isInstance(handler) ? type.cast(handler) : null;
                }
            };
            try {
                new JobRequestScheduler(storage).enqueue(IntStream.range(0, jobs).mapToObj(NoopRequest::new));
                DbSchedulerPeer.execute(pool, "VACUUM ANALYZE jobrunr_jobs");
                BackgroundJobServer server = new BackgroundJobServer(storage, json, activator,
                        BackgroundJobServerConfiguration.usingStandardBackgroundJobServerConfiguration()
                                .andWorkerCount(concurrency).andPollInterval(POLL_INTERVAL));
                long start = System.nanoTime();
                long end;
                try {
                    server.start();
                    end = Waits.drained(handler.ran::get, jobs, () -> notSucceeded(pool) == 0, Duration.ofMinutes(15), "JobRunr");
                } finally {
                    server.stop();
                }
                if (handler.ran.get() != jobs) throw new BenchException("JobRunr ran " + handler.ran.get() + " jobs for " + jobs);
                return Drain.timed(jobs, start, handler.firstJob.get(), end, Double.NaN);
            } finally {
                storage.close();
            }
        }
    }

    private static long notSucceeded(HikariDataSource pool) {
        try (Connection c = pool.getConnection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT count(*) FROM jobrunr_jobs WHERE state <> 'SUCCEEDED'")) {
            rs.next();
            return rs.getLong(1);
        } catch (SQLException e) {
            throw new BenchException("JobRunr: cannot count jobs: " + e.getMessage(), e);
        }
    }
}
