package io.jobq.bootstrap;

import static io.jobq.application.port.Throwables.rootMessage;
import static io.jobq.bootstrap.Settings.ADMIN_KEY;
import static io.jobq.bootstrap.Settings.BIND;
import static io.jobq.bootstrap.Settings.CLAIM_BATCH;
import static io.jobq.bootstrap.Settings.CONCURRENCY;
import static io.jobq.bootstrap.Settings.DATABASE_URL;
import static io.jobq.bootstrap.Settings.GRACE_PERIOD;
import static io.jobq.bootstrap.Settings.HEARTBEAT;
import static io.jobq.bootstrap.Settings.LEASE;
import static io.jobq.bootstrap.Settings.LISTEN;
import static io.jobq.bootstrap.Settings.MAINTENANCE_INTERVAL;
import static io.jobq.bootstrap.Settings.MAX_REQUEST_BYTES;
import static io.jobq.bootstrap.Settings.METRICS_PORT;
import static io.jobq.bootstrap.Settings.POLL_INTERVAL;
import static io.jobq.bootstrap.Settings.POOL_SIZE;
import static io.jobq.bootstrap.Settings.PORT;
import static io.jobq.bootstrap.Settings.PREFETCH;
import static io.jobq.bootstrap.Settings.QUEUES;
import static io.jobq.bootstrap.Settings.SCHEMA;
import static io.jobq.bootstrap.Settings.SELF_VACUUM;
import static io.jobq.bootstrap.Settings.TASK_TIMEOUT;
import static io.jobq.bootstrap.Settings.WORKER_ID;

import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.metrics.micrometer.MicrometerMetricsTrackerFactory;
import io.jobq.application.port.JobQueueException;
import io.jobq.application.port.WakeupChannel;
import io.jobq.application.worker.FatalErrorPolicy;
import io.jobq.application.worker.HandlerRegistry;
import io.jobq.application.worker.HandlerSettings;
import io.jobq.application.worker.Worker;
import io.jobq.application.worker.WorkerSettings;
import io.jobq.http.AccessKeys;
import io.jobq.http.HttpApi;
import io.jobq.http.HttpSettings;
import io.jobq.http.WorkerMetrics;
import io.jobq.postgres.JobqSchema;
import io.jobq.postgres.Migrations;
import io.jobq.postgres.PostgresJobStore;
import io.jobq.postgres.PostgresWakeupChannel;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import io.micrometer.core.instrument.MeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** What each role starts, and the order it stops things in. */
final class Roles {
    private static final Logger log = LoggerFactory.getLogger(Roles.class);

    private Roles() {}

    /** Starts {@code role} and returns its exit code: at once for {@code migrate}, after SIGTERM for the others. */
    static int start(Role role, Settings settings) throws InterruptedException {
        return role == Role.MIGRATE ? migrate(settings) : run(settings, role, Termination.install());
    }

    /** {@code migrate}: apply the schema, report, exit 0. */
    static int migrate(Settings settings) throws InterruptedException {
        DatabaseUrl url = Database.resolve(settings.get(DATABASE_URL));
        try (HikariDataSource pool = Database.pool(url, 2, "jobq-migrate")) {
            int applied = migrateOrExplain(pool, url, settings.get(SCHEMA), null);
            log.info("schema {} of {} is up to date ({} migration(s) applied)", settings.get(SCHEMA).name(), url.masked(), applied);
            return 0;
        }
    }

    /**
     * Runs the API and/or a worker until SIGTERM/SIGINT, then stops them: the API first (no new work
     * accepted), then the worker, which drains in-hand jobs within its grace period.
     */
    static int run(Settings settings, Role role, Termination termination) throws InterruptedException {
        boolean api = role.runs(Role.Part.HTTP_API);
        boolean worker = role.runs(Role.Part.WORKER);
        AccessKeys keys = ApiAccess.keys(settings); // the API's, and a worker's metrics port's; refused ones exit 2 at once
        DatabaseUrl url = Database.resolve(settings.get(DATABASE_URL));
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        List<AutoCloseable> stopOrder = new ArrayList<>();
        HikariDataSource pool = Database.pool(url, settings.get(POOL_SIZE), "jobq");
        pool.setMetricsTrackerFactory(new MicrometerMetricsTrackerFactory(registry));
        try {
            try {
                if (api) { // a role that serves the API migrates first; a worker alone only checks
                    migrateOrExplain(pool, url, settings.get(SCHEMA), termination);
                } else {
                    requireMigrated(pool, url, settings.get(SCHEMA), termination);
                }
            } catch (DatabaseAtStart.Stopped stopped) {
                log.info("stopped while waiting for the database");
                return 0;
            }
            PostgresJobStore.Options options = PostgresJobStore.Options.DEFAULTS.withSchema(settings.get(SCHEMA));
            PostgresJobStore store = new PostgresJobStore(pool, settings.get(SELF_VACUUM) ? options : options.withoutSelfVacuum());
            if (api) {
                HttpSettings http = HttpSettings.builder().maxBodyBytes(settings.get(MAX_REQUEST_BYTES)).keys(keys).build();
                HttpApi server = startApi(store, registry, http, settings.get(BIND), settings.get(PORT));
                stopOrder.add(server::stop);
                log.info("HTTP API listening on {}:{} (database {}; {})", settings.get(BIND), server.port(), url.masked(), keys);
                if (keys.isOpen()) {
                    log.warn("the HTTP API is open: anyone who reaches {}:{} can enqueue as any tenant, read every job and"
                            + " change weights and caps; set {} (README, Securing a deployment)", settings.get(BIND),
                            server.port(), ADMIN_KEY.env());
                }
                if (settings.get(METRICS_PORT).isPresent()) {
                    // Not an error: the variable may be set for a whole deployment, workers included.
                    log.warn("{} / {} ({}) is for the worker role only and is ignored here: GET /metrics is served on "
                            + "the API port {}", METRICS_PORT.env(), METRICS_PORT.flag(), settings.get(METRICS_PORT).get(),
                            server.port());
                }
            }
            if (worker) {
                Worker w = startWorker(settings, store, pool, url, registry);
                stopOrder.add(w::close);
                if (!api && settings.get(METRICS_PORT).isPresent()) {
                    MetricsServer metrics;
                    try {
                        metrics = MetricsServer.start(registry, settings.get(BIND), settings.get(METRICS_PORT).get(), w, keys);
                    } catch (RuntimeException e) {
                        w.close(); // or it would stay listed as live (GET /workers) until its rows age out
                        throw e;
                    }
                    // closed after the worker: /health answers 503 "stopping" while in-hand jobs drain
                    stopOrder.add(metrics::close);
                    log.info("worker metrics and health on {}:{} (GET /metrics{}, GET /health)", settings.get(BIND), metrics.port(),
                            keys.isOpen() ? " with no key: keep the port private" : " with the metrics or admin key");
                }
                log.info("worker {} serving queues {} with {} slots (lease {}, grace {}, task timeouts {}; database {})",
                        w.id(), settings.get(QUEUES), settings.get(CONCURRENCY), settings.get(LEASE),
                        settings.get(GRACE_PERIOD), settings.get(TASK_TIMEOUT), url.masked());
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

    private static HttpApi startApi(PostgresJobStore store, PrometheusMeterRegistry registry, HttpSettings http, String host,
            int port) {
        try {
            return HttpApi.create(store, registry, http).start(host, port);
        } catch (RuntimeException e) {
            throw new LauncherException("cannot start the HTTP API on " + host + ":" + port + ": " + rootMessage(e), e);
        }
    }

    private static Worker startWorker(Settings s, PostgresJobStore store, HikariDataSource pool, DatabaseUrl url,
            MeterRegistry registry) {
        HandlerRegistry handlers = handlers(Thread.currentThread().getContextClassLoader(), System.getenv(), System.getProperties());
        // An OutOfMemoryError (or another fatal VM error) in the worker halts the process, exit status 3.
        Worker.Builder builder = Worker.builder(store, handlers).settings(workerSettings(s)).fatalErrors(FatalErrorPolicy.HALT);
        Optional<WakeupChannel> channel = s.get(LISTEN)
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

    /**
     * The built-ins plus every plug-in provider on {@code loader}'s class path, each made from the
     * {@code JOBQ_HANDLER_*} variables and system properties.
     *
     * @throws LauncherException if a provider refuses its settings or two handlers claim one task
     */
    static HandlerRegistry handlers(ClassLoader loader, Map<String, String> env, Properties systemProperties) {
        try {
            return HandlerRegistry.withBuiltIns().registerDiscovered(loader, HandlerSettings.fromEnvironment(env, systemProperties));
        } catch (IllegalArgumentException e) {
            throw new LauncherException("cannot load the handlers: " + e.getMessage(), e);
        }
    }

    /** The worker's settings from the launcher's: with no variable or flag set, {@link WorkerSettings#DEFAULTS}. */
    static WorkerSettings workerSettings(Settings s) {
        WorkerSettings.Builder ws = WorkerSettings.builder()
                .queues(s.get(QUEUES))
                .concurrency(s.get(CONCURRENCY))
                .claimBatchSize(s.get(CLAIM_BATCH))
                .prefetch(s.get(PREFETCH))
                .lease(s.get(LEASE))
                .heartbeatInterval(s.get(HEARTBEAT))
                .pollInterval(s.get(POLL_INTERVAL))
                .listen(s.get(LISTEN))
                .maintenanceInterval(s.get(MAINTENANCE_INTERVAL))
                .gracePeriod(s.get(GRACE_PERIOD))
                .workerId(s.get(WORKER_ID));
        return s.get(TASK_TIMEOUT).applyTo(ws).build();
    }

    private static int migrateOrExplain(HikariDataSource pool, DatabaseUrl url, JobqSchema schema, Termination termination)
            throws InterruptedException {
        try {
            return DatabaseAtStart.await(() -> Migrations.migrate(pool, schema), url.masked(), termination);
        } catch (JobQueueException e) {
            throw new LauncherException("cannot migrate " + url.masked() + ": " + rootMessage(e), e);
        }
    }

    private static void requireMigrated(HikariDataSource pool, DatabaseUrl url, JobqSchema schema, Termination termination)
            throws InterruptedException {
        try {
            DatabaseAtStart.await(() -> {
                Migrations.requireCurrent(pool, schema);
                return null;
            }, url.masked(), termination);
        } catch (JobQueueException e) {
            throw new LauncherException(e.getMessage() + " [database " + url.masked() + "]", e);
        }
    }


}
