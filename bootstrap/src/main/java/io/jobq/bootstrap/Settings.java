package io.jobq.bootstrap;

import static io.jobq.bootstrap.SettingType.bool;
import static io.jobq.bootstrap.SettingType.duration;
import static io.jobq.bootstrap.SettingType.integer;
import static io.jobq.bootstrap.SettingType.optional;

import io.jobq.application.config.ConfigValue;
import io.jobq.application.worker.WorkerSettings;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.lease.WorkerId;
import io.jobq.http.HttpSettings;
import io.jobq.postgres.JobqSchema;
import io.jobq.postgres.PostgresJobStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Everything the launcher can be told, from environment variables with command-line flags overriding
 * them; the only reader of the environment in jobq. The constants below are the one declaration of each
 * {@link Setting}: its variable, value type, default and meaning. The flags and {@code --help} of each
 * role ({@link Main}), resolution ({@link #resolve}) and README's configuration table (written and
 * checked by {@code ReadmeConfigurationTableTest}) are derived from them.
 *
 * <p>Defaults that belong to a component are read from it, not restated: the worker's from
 * {@link WorkerSettings#DEFAULTS}, the body limit from {@link HttpSettings#DEFAULTS}, self-vacuum from
 * {@link PostgresJobStore.Options#DEFAULTS}. The launcher's own (port, pool size, log level) are here.
 */
final class Settings {
    private static final List<Setting<?>> DECLARED = new ArrayList<>();
    private static final WorkerSettings WORKER = WorkerSettings.DEFAULTS;
    private static final int MAX_POOL_SIZE = 200;
    private static final int MAX_PORT = 65_535;
    /** Shortest heartbeat, poll and maintenance interval: 10 ms. */
    private static final Duration MIN_INTERVAL = Duration.ofMillis(10);

    static final Setting<Optional<DatabaseUrl>> DATABASE_URL = everyRole("DATABASE_URL",
            optional(SettingType.databaseUrl()), Optional.empty(),
            "postgres://user:pass@host:5432/db or jdbc:postgresql://host:5432/db?user=…. Unset: localhost:5432, "
                    + "database " + Database.DEFAULT_DATABASE + ", as your OS user or else postgres, created if missing "
                    + "(and allowed). Set: used as given, never created.");
    static final Setting<JobqSchema> SCHEMA = everyRole("JOBQ_SCHEMA", SettingType.schema(), JobqSchema.DEFAULT,
            "Schema of jobq's tables and Flyway history, created by migrate. `public` keeps a 0.1 database in place.");
    static final Setting<Integer> PORT = http("PORT", integer("PORT", 0, MAX_PORT), 8000,
            "The HTTP API's port.");
    static final Setting<String> BIND = everyRole("JOBQ_BIND", SettingType.host(), "127.0.0.1",
            "Address to listen on (API, worker metrics): `127.0.0.1` local only, `0.0.0.0` all.");
    static final Setting<Optional<String>> ADMIN_KEY = served("JOBQ_ADMIN_KEY", SettingType.secret(), Optional.empty(),
            "Every endpoint but GET /health then needs `Authorization: Bearer <key>` ("
                    + io.jobq.http.AccessKeys.MIN_KEY_LENGTH + "+ characters; the flag shows in `ps`). Unset: the API is open.");
    static final Setting<Optional<java.nio.file.Path>> ADMIN_KEY_FILE = served("JOBQ_ADMIN_KEY_FILE", optional(SettingType.path()),
            Optional.empty(), "A file holding the admin key instead. Unset: none.");
    static final Setting<Optional<String>> METRICS_KEY = served("JOBQ_METRICS_KEY", SettingType.secret(), Optional.empty(),
            "A key that opens GET /metrics only. Unset: none.");
    static final Setting<Integer> POOL_SIZE = everyRole("JOBQ_POOL_SIZE", integer("N", 1, MAX_POOL_SIZE), 10,
            "Most pooled database connections per process (1-" + MAX_POOL_SIZE + ").");
    static final Setting<Duration> LEASE = worker("JOBQ_LEASE", duration(WorkerSettings.MIN_LEASE), WORKER.lease(),
            "How long a claimed job stays leased without a heartbeat.");
    static final Setting<Optional<Duration>> HEARTBEAT = worker("JOBQ_HEARTBEAT", optional(duration(MIN_INTERVAL)),
            WORKER.heartbeatInterval(), "How often a worker extends its leases. Unset: lease / 3.");
    static final Setting<Duration> POLL_INTERVAL = worker("JOBQ_POLL_INTERVAL", duration(MIN_INTERVAL),
            WORKER.pollInterval(), "Fallback poll when no wake-up arrives.");
    static final Setting<Integer> CLAIM_BATCH = worker("JOBQ_CLAIM_BATCH",
            integer("N", 1, WorkerSettings.MAX_CONCURRENCY), WORKER.claimBatchSize(),
            "Most jobs one claim takes (1-" + WorkerSettings.MAX_CONCURRENCY + "; at most free slots + prefetch).");
    static final Setting<Integer> PREFETCH = worker("JOBQ_PREFETCH",
            integer("N", 0, WorkerSettings.MAX_CONCURRENCY), WORKER.prefetch(),
            "Jobs a worker may claim beyond its free slots (for short jobs).");
    static final Setting<Integer> CONCURRENCY = worker("JOBQ_CONCURRENCY",
            integer("N", 1, WorkerSettings.MAX_CONCURRENCY), WORKER.concurrency(),
            "Jobs a worker runs at once, each on a virtual thread (1-" + WorkerSettings.MAX_CONCURRENCY + ").");
    static final Setting<List<QueueName>> QUEUES = worker("JOBQ_QUEUES", SettingType.queues(), WORKER.queues(),
            "Comma-separated queues a worker serves.");
    static final Setting<Duration> GRACE_PERIOD = worker("JOBQ_GRACE_PERIOD", duration(Duration.ZERO),
            WORKER.gracePeriod(), "On SIGTERM, how long in-hand jobs may run to finish.");
    static final Setting<Duration> MAINTENANCE_INTERVAL = worker("JOBQ_MAINTENANCE_INTERVAL", duration(MIN_INTERVAL),
            WORKER.maintenanceInterval(), "Upkeep period (reap, promote), one pass a period across all workers.");
    static final Setting<Boolean> LISTEN = worker("JOBQ_LISTEN", bool(), WORKER.listen(),
            "Wake workers with LISTEN/NOTIFY; false = poll only.");
    static final Setting<Long> MAX_REQUEST_BYTES = http("JOBQ_MAX_REQUEST_BYTES",
            SettingType.bytes(HttpSettings.MIN_BODY_BYTES), HttpSettings.DEFAULTS.maxBodyBytes(),
            "Largest accepted HTTP request body, in bytes.");
    static final Setting<String> LOG_LEVEL = everyRole("JOBQ_LOG_LEVEL", SettingType.logLevel(), "INFO",
            SettingType.LOG_LEVELS + ".");
    static final Setting<Optional<WorkerId>> WORKER_ID = worker("JOBQ_WORKER_ID", optional(SettingType.workerId()),
            WORKER.workerId(), "Name of this worker in leases and logs. Unset: host-pid-random.");
    static final Setting<Optional<Integer>> METRICS_PORT = worker("JOBQ_METRICS_PORT",
            optional(integer("PORT", 0, MAX_PORT)), Optional.empty(),
            "`worker` role: serve GET /metrics (Prometheus) on this port (`all` serves it on the API port). Unset: none.");
    static final Setting<TaskTimeouts> TASK_TIMEOUT = worker("JOBQ_TASK_TIMEOUT", SettingType.taskTimeouts(),
            TaskTimeouts.DEFAULT,
            "How long a run may take before its handler is interrupted and the job fails retryably: comma-separated "
                    + "`task=duration`, and `default=duration` (or `default=none`) for every other task, "
                    + ConfigValue.text(WorkerSettings.DEFAULT_TASK_TIMEOUT) + " when not given. E.g. `sleep=5s,report=2h`.");
    static final Setting<Boolean> SELF_VACUUM = worker("JOBQ_SELF_VACUUM", bool(),
            PostgresJobStore.Options.DEFAULTS.selfVacuumInterval().isPresent(),
            "Where autovacuum is off for jobq's tables, workers VACUUM them past autovacuum's threshold (one at a "
                    + "time, a table once a minute at most); false = never.");

    private final Map<Setting<?>, Object> values;

    private Settings(Map<Setting<?>, Object> values) {
        this.values = Map.copyOf(values);
    }

    /** Every declared setting, in declaration order (the order of README's table and of error messages). */
    static List<Setting<?>> all() {
        return Collections.unmodifiableList(DECLARED);
    }

    /** The value in force of {@code setting}. */
    @SuppressWarnings("unchecked") // values holds, for each setting, what its own type parsed
    <T> T get(Setting<T> setting) {
        return (T) values.get(setting);
    }

    /** Thrown for invalid configuration; its message is one line naming every bad variable or flag. */
    static final class InvalidSettingsException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        InvalidSettingsException(String message) {
            super(message);
        }
    }

    /**
     * The variables among {@code names} that look like jobq's ({@code JOBQ_…}) but are none of its settings, so
     * that a misspelt one ({@code JOBQ_DATABASE_URL} for {@code DATABASE_URL}) is reported instead of silently
     * ignored. {@code JOBQ_HANDLER_*} (handlers' own) and {@code JOBQ_TEST_*} (the test suite's) are not jobq's.
     */
    static List<String> unknownVariables(java.util.Collection<String> names) {
        java.util.Set<String> declared = new java.util.HashSet<>();
        for (Setting<?> s : DECLARED) declared.add(s.env());
        return names.stream().filter(n -> n.startsWith("JOBQ_") && !n.startsWith("JOBQ_HANDLER_") && !n.startsWith("JOBQ_TEST_")
                && !declared.contains(n)).sorted().toList();
    }

    /** The defaults alone: no environment, no flags. */
    static Settings defaults() {
        return resolve(Map.of(), Map.of());
    }

    /**
     * Resolves every declared setting: the flag's text if given, else the environment variable's, else the
     * default. Settings a role does not take are still read from the environment (and checked).
     *
     * @param env the process environment (only declared variables are read)
     * @param flags texts given on the command line
     * @throws InvalidSettingsException naming each invalid variable or flag, its value and what was expected
     */
    static Settings resolve(Map<String, String> env, Map<Setting<?>, String> flags) {
        Map<Setting<?>, Object> values = new HashMap<>();
        List<String> problems = new ArrayList<>();
        for (Setting<?> setting : DECLARED) {
            String text = flags.get(setting) != null ? flags.get(setting) : env.get(setting.env());
            if (text == null) {
                values.put(setting, setting.defaultValue());
                continue;
            }
            try {
                values.put(setting, setting.type().parse(text));
            } catch (RuntimeException e) {
                problems.add("invalid " + source(setting, flags) + "=" + setting.type().echo().apply(text) + ": "
                        + e.getMessage());
            }
        }
        Settings settings = new Settings(values);
        if (problems.isEmpty()) {
            Duration lease = settings.get(LEASE);
            settings.get(HEARTBEAT).filter(h -> h.compareTo(lease) >= 0).ifPresent(h -> problems.add(
                    source(HEARTBEAT, flags) + " must be shorter than the lease (" + lease.toMillis() + " ms)"));
        }
        if (!problems.isEmpty()) throw new InvalidSettingsException(String.join("; ", problems));
        return settings;
    }

    /** How an error names {@code setting}: as the flag if it was given, else as the variable. */
    private static String source(Setting<?> setting, Map<Setting<?>, String> flags) {
        return flags.get(setting) != null ? setting.flag() : setting.env();
    }

    private static <T> Setting<T> everyRole(String env, SettingType<T> type, T defaultValue, String doc) {
        return declare(new Setting<>(env, Set.of(), type, defaultValue, doc));
    }

    private static <T> Setting<T> http(String env, SettingType<T> type, T defaultValue, String doc) {
        return declare(new Setting<>(env, Set.of(Role.Part.HTTP_API), type, defaultValue, doc));
    }

    /** A setting of whatever a role serves over HTTP: the API, or a worker's metrics port (the keys). */
    private static <T> Setting<T> served(String env, SettingType<T> type, T defaultValue, String doc) {
        return declare(new Setting<>(env, Set.of(Role.Part.HTTP_API, Role.Part.WORKER), type, defaultValue, doc));
    }

    private static <T> Setting<T> worker(String env, SettingType<T> type, T defaultValue, String doc) {
        return declare(new Setting<>(env, Set.of(Role.Part.WORKER), type, defaultValue, doc));
    }

    private static <T> Setting<T> declare(Setting<T> setting) {
        DECLARED.add(setting);
        return setting;
    }
}
