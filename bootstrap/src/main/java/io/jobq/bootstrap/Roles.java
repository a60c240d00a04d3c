package io.jobq.bootstrap;

import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.metrics.micrometer.MicrometerMetricsTrackerFactory;
import io.jobq.application.port.JobQueueException;
import io.jobq.application.port.WakeupChannel;
import io.jobq.application.worker.FatalErrorPolicy;
import io.jobq.application.worker.HandlerRegistry;
import io.jobq.application.worker.Worker;
import io.jobq.application.worker.WorkerSettings;
import io.jobq.http.HttpApi;
import io.jobq.http.HttpSettings;
import io.jobq.http.WorkerMetrics;
import io.jobq.postgres.Migrations;
import io.jobq.postgres.PostgresJobStore;
import io.jobq.postgres.PostgresWakeupChannel;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import io.micrometer.core.instrument.MeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** What each role starts, and the order it stops things in. */
final class Roles {
    private static final Logger log = LoggerFactory.getLogger(Roles.class);

    private Roles() {}

    /** {@code migrate}: apply the schema, report, exit 0. */
    static int migrate(Settings settings) {
        DatabaseUrl url = Database.resolve(settings.database());
        try (HikariDataSource pool = Database.pool(url, 2, "jobq-migrate")) {
            int applied = migrateOrExplain(pool, url);
            log.info("schema of {} is up to date ({} migration(s) applied)", url.masked(), applied);
            return 0;
        }
    }

    /**
     * Runs the API and/or a worker until SIGTERM/SIGINT, then stops them: the API first (no new work
     * accepted), then the worker, which drains in-hand jobs within its grace period.
     */
    static int run(Settings settings, boolean api, boolean worker, Termination termination) throws InterruptedException {
        DatabaseUrl url = Database.resolve(settings.database());
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        List<AutoCloseable> stopOrder = new ArrayList<>();
        HikariDataSource pool = Database.pool(url, settings.poolSize(), "jobq");
        pool.setMetricsTrackerFactory(new MicrometerMetricsTrackerFactory(registry));
        try {
            if (api) {
                migrateOrExplain(pool, url);
            } else {
                requireMigrated(pool, url);
            }
            PostgresJobStore store = new PostgresJobStore(pool, settings.selfVacuum()
                    ? PostgresJobStore.Options.DEFAULTS : PostgresJobStore.Options.DEFAULTS.withoutSelfVacuum());
            if (api) {
                HttpSettings http = HttpSettings.builder().maxBodyBytes(settings.maxRequestBytes()).build();
                HttpApi server = startApi(store, registry, http, settings.port());
                stopOrder.add(server::stop);
                log.info("HTTP API listening on port {} (database {})", server.port(), url.masked());
                if (settings.metricsPort().isPresent()) {
                    // Not an error: the variable may be set for a whole deployment, workers included.
                    log.warn("JOBQ_METRICS_PORT / --metrics-port ({}) is for the worker role only and is ignored here: "
                            + "GET /metrics is served on the API port {}", settings.metricsPort().get(), server.port());
                }
            }
            if (worker) {
                Worker w = startWorker(settings, store, pool, url, registry);
                stopOrder.add(w::close);
                if (!api && settings.metricsPort().isPresent()) {
                    MetricsServer metrics = MetricsServer.start(registry, settings.metricsPort().get());
                    stopOrder.addFirst(metrics::close);
                    log.info("worker metrics on port {} (GET /metrics)", metrics.port());
                }
                log.info("worker {} serving queues {} with {} slots (lease {}, grace {}, task timeouts {}; database {})",
                        w.id(), settings.queues(), settings.concurrency(), settings.lease(), settings.gracePeriod(),
                        settings.taskTimeouts(), url.masked());
            }
            termination.await();
            log.info("stopping{}{}", api ? " the API" : "", worker ? (api ? " and" : "") + " the worker (draining in-hand jobs)" : "");
            for (AutoCloseable c : stopOrder) {
                try {
                    c.close();
                } catch (Exception | Error e) {
                    // an Error from one part must not keep the next from stopping
                    if (FatalErrorPolicy.isFatal(e)) FatalErrorPolicy.HALT.onFatalError("stopping", e);
                    log.warn("error while stopping: {}", e.toString());
                }
            }
            log.info("stopped");
            return 0;
        } finally {
            pool.close();
        }
    }

    private static HttpApi startApi(PostgresJobStore store, PrometheusMeterRegistry registry, HttpSettings http, int port) {
        try {
            return HttpApi.create(store, registry, http).start(port);
        } catch (RuntimeException e) {
            throw new LauncherException("cannot start the HTTP API on port " + port + ": " + rootMessage(e), e);
        }
    }

    private static Worker startWorker(Settings s, PostgresJobStore store, HikariDataSource pool, DatabaseUrl url,
            MeterRegistry registry) {
        WorkerSettings.Builder ws = WorkerSettings.builder()
                .queues(s.queues())
                .concurrency(s.concurrency())
                .claimBatchSize(s.claimBatch())
                .lease(s.lease())
                .heartbeatInterval(s.heartbeat())
                .pollInterval(s.pollInterval())
                .listen(s.listen())
                .maintenanceInterval(s.maintenanceInterval())
                .gracePeriod(s.gracePeriod())
                .workerId(s.workerId());
        s.taskTimeouts().applyTo(ws);
        HandlerRegistry handlers = HandlerRegistry.withBuiltIns()
                .registerDiscovered(Thread.currentThread().getContextClassLoader());
        // An OutOfMemoryError (or another fatal VM error) in the worker halts the process, exit status 3.
        Worker.Builder builder = Worker.builder(store, handlers).settings(ws.build()).fatalErrors(FatalErrorPolicy.HALT);
        Optional<WakeupChannel> channel = s.listen()
                ? Optional.of(new PostgresWakeupChannel(url.jdbcUrl(), pool))
                : Optional.empty();
        channel.ifPresent(builder::wakeups);
        // listener state, maintenance and store errors as meters (robustness case R03)
        builder.listener(WorkerMetrics.bind(registry, channel));
        Worker w = builder.build();
        w.start();
        log.info("handlers: {}", handlers.tasks());
        return w;
    }

    private static int migrateOrExplain(HikariDataSource pool, DatabaseUrl url) {
        try {
            return Migrations.migrate(pool);
        } catch (JobQueueException e) {
            throw new LauncherException("cannot migrate " + url.masked() + ": " + rootMessage(e), e);
        }
    }

    private static void requireMigrated(HikariDataSource pool, DatabaseUrl url) {
        try {
            Migrations.requireCurrent(pool);
        } catch (JobQueueException e) {
            throw new LauncherException(e.getMessage() + " [database " + url.masked() + "]", e);
        }
    }

    static String rootMessage(Throwable t) {
        Throwable root = t;
        while (root.getCause() != null && root.getCause() != root) root = root.getCause();
        return root.getMessage() == null ? root.toString() : root.getMessage();
    }

}
