package io.jobq.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.zaxxer.hikari.HikariDataSource;
import io.jobq.application.worker.HandlerSettings;
import io.jobq.application.worker.JobContext;
import io.jobq.application.worker.JobHandler;
import io.jobq.application.worker.JobHandlerProvider;
import io.jobq.application.worker.PermanentJobFailure;
import io.jobq.bootstrap.DatabaseUrl;
import io.jobq.domain.job.TaskName;
import io.jobq.postgres.PostgresPool;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/**
 * The chaos experiment's handler, loaded into the REAL launcher's worker processes through
 * {@link java.util.ServiceLoader}: the bench copies this class and its service file out of jobq-bench.jar
 * and starts {@code java -cp jobq.jar:<that directory> io.jobq.bootstrap.Main worker}.
 *
 * <p>Task {@value #TASK}, payload {@code {"ms": 100}}: first records its side effect, one row
 * (job id, attempt, worker process id) in {@code bench_effects}, committed at once on a connection of
 * its own (so a SIGKILL after it leaves the row behind, as a real side effect would), then sleeps
 * {@code ms} milliseconds, so kills land mid-job. A re-run after a kill therefore shows up as a second
 * row with a higher attempt.
 *
 * <p>The soak ({@link SoakExperiment}) runs the same handler under four task names, each a kind of job an
 * outage meets, told apart by the payload: {@value #FAST} and {@value #SLOW} ({@code {"ms": n}}, the slow
 * one longer than the lease, so it lives on heartbeats), {@value #FLAKY} ({@code {"ms": n, "fail_until": k}}:
 * attempts up to k throw) and {@value #DOOMED} ({@code {"permanent": "why"}}: a {@link PermanentJobFailure}).
 * Every attempt records its side effect first, whatever it does next.
 *
 * <p>The database is the worker's own: the handler reads {@code DATABASE_URL} as the launcher does.
 */
public final class ChaosHandlers implements JobHandlerProvider {
    /** The task name the chaos jobs carry. */
    public static final String TASK = "bench_chaos";
    static final String FAST = "soak_fast";
    static final String SLOW = "soak_slow";
    static final String FLAKY = "soak_flaky";
    static final String DOOMED = "soak_doomed";

    /** Public, no arguments: ServiceLoader instantiates it. */
    public ChaosHandlers() {}

    @Override
    public Map<TaskName, JobHandler> handlers(HandlerSettings settings) {
        JobHandler handler = ChaosHandlers::handle;
        return Map.of(TaskName.of(TASK), handler, TaskName.of(FAST), handler, TaskName.of(SLOW), handler,
                TaskName.of(FLAKY), handler, TaskName.of(DOOMED), handler);
    }

    private static Optional<JsonNode> handle(JobContext ctx) throws Exception {
        try (Connection c = Effects.pool().getConnection();
             PreparedStatement st = c.prepareStatement("INSERT INTO bench_effects (job_id, attempt, pid) VALUES (?, ?, ?)")) {
            st.setLong(1, ctx.jobId().value());
            st.setInt(2, ctx.attempt());
            st.setLong(3, ProcessHandle.current().pid());
            st.executeUpdate();
        }
        JsonNode p = ctx.payload();
        if (p.has("permanent")) throw new PermanentJobFailure(p.path("permanent").asText());
        if (ctx.attempt() <= p.path("fail_until").asInt(0)) {
            throw new IllegalStateException("planned failure on attempt " + ctx.attempt());
        }
        Thread.sleep(Duration.ofMillis(p.path("ms").asLong(0)));
        return Optional.empty();
    }

    /** One small pool per worker process, opened on first use. */
    private static final class Effects {
        private static volatile HikariDataSource pool;

        static HikariDataSource pool() {
            HikariDataSource p = pool;
            if (p != null) return p;
            synchronized (Effects.class) {
                if (pool == null) {
                    String url = System.getenv("DATABASE_URL");
                    if (url == null || url.isBlank()) throw new IllegalStateException("DATABASE_URL is not set");
                    pool = PostgresPool.create(DatabaseUrl.parse(url).jdbcUrl(), 4, "bench-effects", Duration.ofSeconds(5));
                }
                return pool;
            }
        }
    }
}
