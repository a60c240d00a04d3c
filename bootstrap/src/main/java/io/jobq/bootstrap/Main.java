package io.jobq.bootstrap;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import io.jobq.application.worker.FatalErrorPolicy;
import io.jobq.bootstrap.Settings.InvalidSettingsException;
import io.jobq.bootstrap.Settings.Key;
import java.io.PrintWriter;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.Callable;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code java -jar jobq.jar <role>}: the launcher. Roles: {@code migrate} (apply the schema and exit),
 * {@code api} (HTTP server; migrates first), {@code worker} (runs jobs; refuses an unmigrated schema)
 * and {@code all} (migrate, API and an in-process worker: the quick start).
 *
 * <p>Exit codes: 0 after a clean run or a graceful stop on SIGTERM/SIGINT; 2 for invalid configuration
 * or command line (one line naming the variable or flag); 1 for any other start-up failure; 3
 * ({@link FatalErrorPolicy#HALT_EXIT_CODE}) when a fatal VM error (OutOfMemoryError, InternalError,
 * UnknownError) reached jobq in any role: the process halts at once, for its supervisor to restart it.
 */
@Command(name = "jobq", mixinStandardHelpOptions = true, version = "jobq 0.1.0",
        description = "A multi-tenant background job queue on PostgreSQL.",
        subcommands = {Main.Migrate.class, Main.Api.class, Main.Worker.class, Main.All.class, CommandLine.HelpCommand.class},
        footer = {"", "Every flag has an environment variable; flags win. See README.md, Configuration."})
public final class Main implements Runnable {

    /** Exit code for invalid configuration or usage. */
    static final int EXIT_USAGE = 2;
    /** Exit code for a start-up failure (database unreachable, schema not migrated, port in use…). */
    static final int EXIT_FAILURE = 1;

    public static void main(String[] args) {
        UncaughtErrors uncaught = UncaughtErrors.install();
        int code;
        try {
            code = run(args);
        } catch (Throwable e) {
            // picocli hands only Exceptions to the handler below; an Error escapes execute(). Exit even
            // then: a non-daemon thread (the HTTP server's) would otherwise keep a broken process alive.
            uncaught.uncaughtException(Thread.currentThread(), e);
            System.err.println("jobq: " + e);
            code = EXIT_FAILURE;
        }
        System.exit(code);
    }

    /** Runs the launcher in this JVM and returns its exit code (tests call this). */
    static int run(String... args) {
        CommandLine cl = new CommandLine(new Main());
        cl.setExecutionExceptionHandler((e, commandLine, parseResult) -> {
            PrintWriter err = commandLine.getErr();
            if (e instanceof InvalidSettingsException) {
                err.println("jobq: " + e.getMessage());
                return EXIT_USAGE;
            }
            err.println("jobq: " + (e.getMessage() == null ? e.toString() : e.getMessage()));
            if (!(e instanceof LauncherException)) LoggerFactory.getLogger(Main.class).error("start-up failed", e);
            return EXIT_FAILURE;
        });
        return cl.execute(args);
    }

    @Override
    public void run() {
        new CommandLine(this).usage(System.out);
    }

    /** Flags every role takes. */
    static final class CommonOptions {
        @Option(names = "--database-url", paramLabel = "URL", description = "Env DATABASE_URL. postgres://user:pass@host:5432/db or jdbc:postgresql://…")
        String databaseUrl;

        @Option(names = "--pool-size", paramLabel = "N", description = "Env JOBQ_POOL_SIZE. Default: 10.")
        String poolSize;

        @Option(names = "--log-level", paramLabel = "LEVEL", description = "Env JOBQ_LOG_LEVEL. Default: INFO.")
        String logLevel;

        void into(Map<Key, String> flags) {
            put(flags, Key.DATABASE_URL, databaseUrl);
            put(flags, Key.JOBQ_POOL_SIZE, poolSize);
            put(flags, Key.JOBQ_LOG_LEVEL, logLevel);
        }
    }

    /** Flags of roles that serve HTTP. */
    static final class HttpOptions {
        @Option(names = "--port", paramLabel = "PORT", description = "Env PORT. Default: 8000.")
        String port;

        @Option(names = "--max-request-bytes", paramLabel = "BYTES", description = "Env JOBQ_MAX_REQUEST_BYTES. Default: 1048576.")
        String maxRequestBytes;

        void into(Map<Key, String> flags) {
            put(flags, Key.PORT, port);
            put(flags, Key.JOBQ_MAX_REQUEST_BYTES, maxRequestBytes);
        }
    }

    /** Flags of roles that run jobs. */
    static final class WorkerOptions {
        @Option(names = "--concurrency", paramLabel = "N", description = "Env JOBQ_CONCURRENCY. Jobs run at once. Default: 4.")
        String concurrency;

        @Option(names = "--queues", paramLabel = "a,b", description = "Env JOBQ_QUEUES. Default: default.")
        String queues;

        @Option(names = "--lease", paramLabel = "DURATION", description = "Env JOBQ_LEASE. Default: 30s.")
        String lease;

        @Option(names = "--heartbeat", paramLabel = "DURATION", description = "Env JOBQ_HEARTBEAT. Default: lease / 3.")
        String heartbeat;

        @Option(names = "--poll-interval", paramLabel = "DURATION", description = "Env JOBQ_POLL_INTERVAL. Default: 1s.")
        String pollInterval;

        @Option(names = "--claim-batch", paramLabel = "N", description = "Env JOBQ_CLAIM_BATCH. Default: 10.")
        String claimBatch;

        @Option(names = "--grace-period", paramLabel = "DURATION", description = "Env JOBQ_GRACE_PERIOD. Default: 30s.")
        String gracePeriod;

        @Option(names = "--maintenance-interval", paramLabel = "DURATION", description = "Env JOBQ_MAINTENANCE_INTERVAL. Default: 1s.")
        String maintenanceInterval;

        @Option(names = "--listen", paramLabel = "BOOL", description = "Env JOBQ_LISTEN. false = poll only. Default: true.")
        String listen;

        @Option(names = "--worker-id", paramLabel = "ID", description = "Env JOBQ_WORKER_ID. Default: host-pid-random.")
        String workerId;

        @Option(names = "--metrics-port", paramLabel = "PORT",
                description = "Env JOBQ_METRICS_PORT. worker role only: serve GET /metrics here (in `all`, /metrics is on"
                        + " the API port and this is ignored with a warning). Default: none.")
        String metricsPort;

        @Option(names = "--task-timeout", paramLabel = "task=DURATION,…",
                description = "Env JOBQ_TASK_TIMEOUT. How long a run may take before its handler is interrupted and the job"
                        + " fails retryably, per task; default=DURATION (or none) for the others. Default: default=15m.")
        String taskTimeout;

        @Option(names = "--self-vacuum", paramLabel = "BOOL", description = "Env JOBQ_SELF_VACUUM. Where autovacuum is off"
                + " for jobq's tables, VACUUM them once dead rows pass their threshold; false = never. Default: true.")
        String selfVacuum;

        void into(Map<Key, String> flags) {
            put(flags, Key.JOBQ_CONCURRENCY, concurrency);
            put(flags, Key.JOBQ_QUEUES, queues);
            put(flags, Key.JOBQ_LEASE, lease);
            put(flags, Key.JOBQ_HEARTBEAT, heartbeat);
            put(flags, Key.JOBQ_POLL_INTERVAL, pollInterval);
            put(flags, Key.JOBQ_CLAIM_BATCH, claimBatch);
            put(flags, Key.JOBQ_GRACE_PERIOD, gracePeriod);
            put(flags, Key.JOBQ_MAINTENANCE_INTERVAL, maintenanceInterval);
            put(flags, Key.JOBQ_LISTEN, listen);
            put(flags, Key.JOBQ_WORKER_ID, workerId);
            put(flags, Key.JOBQ_METRICS_PORT, metricsPort);
            put(flags, Key.JOBQ_TASK_TIMEOUT, taskTimeout);
            put(flags, Key.JOBQ_SELF_VACUUM, selfVacuum);
        }
    }

    private static void put(Map<Key, String> flags, Key key, String value) {
        if (value != null) flags.put(key, value);
    }

    /** Resolves settings from the environment and the given flags, and applies the log level. */
    private static Settings settings(Map<Key, String> flags) {
        Settings s = Settings.resolve(System.getenv(), flags);
        if (LoggerFactory.getILoggerFactory() instanceof LoggerContext ctx) {
            ctx.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME).setLevel(Level.valueOf(s.logLevel()));
        }
        return s;
    }

    @Command(name = "migrate", mixinStandardHelpOptions = true, description = "Apply the schema migrations and exit.")
    static final class Migrate implements Callable<Integer> {
        @Mixin CommonOptions common = new CommonOptions();

        @Override
        public Integer call() {
            Map<Key, String> flags = new EnumMap<>(Key.class);
            common.into(flags);
            return Roles.migrate(settings(flags));
        }
    }

    @Command(name = "api", mixinStandardHelpOptions = true, description = "Run the HTTP API (migrates the schema first).")
    static final class Api implements Callable<Integer> {
        @Mixin CommonOptions common = new CommonOptions();
        @Mixin HttpOptions http = new HttpOptions();

        @Override
        public Integer call() throws InterruptedException {
            Map<Key, String> flags = new EnumMap<>(Key.class);
            common.into(flags);
            http.into(flags);
            return Roles.run(settings(flags), true, false, Termination.install());
        }
    }

    @Command(name = "worker", mixinStandardHelpOptions = true,
            description = "Run jobs. Refuses to start on an unmigrated schema; drains in-hand jobs on SIGTERM.")
    static final class Worker implements Callable<Integer> {
        @Mixin CommonOptions common = new CommonOptions();
        @Mixin WorkerOptions worker = new WorkerOptions();

        @Override
        public Integer call() throws InterruptedException {
            Map<Key, String> flags = new EnumMap<>(Key.class);
            common.into(flags);
            worker.into(flags);
            return Roles.run(settings(flags), false, true, Termination.install());
        }
    }

    @Command(name = "all", mixinStandardHelpOptions = true,
            description = "Migrate, then run the HTTP API and a worker in one process: the quick start.")
    static final class All implements Callable<Integer> {
        @Mixin CommonOptions common = new CommonOptions();
        @Mixin HttpOptions http = new HttpOptions();
        @Mixin WorkerOptions worker = new WorkerOptions();

        @Override
        public Integer call() throws InterruptedException {
            Map<Key, String> flags = new EnumMap<>(Key.class);
            common.into(flags);
            http.into(flags);
            worker.into(flags);
            return Roles.run(settings(flags), true, true, Termination.install());
        }
    }
}
