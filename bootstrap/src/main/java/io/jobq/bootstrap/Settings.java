package io.jobq.bootstrap;

import io.jobq.domain.job.QueueName;
import io.jobq.domain.lease.WorkerId;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * Everything the launcher can be told, from environment variables with command-line flags overriding
 * them. The only reader of the environment in jobq. {@link Key} is the one table of names, defaults and
 * meanings; README's configuration table is written from it.
 *
 * @param database where PostgreSQL is; empty means the local default (see {@link Key#DATABASE_URL})
 * @param heartbeat empty means lease / 3
 * @param workerId empty means host-pid-random
 * @param metricsPort where the worker role serves /metrics; empty means nowhere (api and all serve it on PORT)
 * @param taskTimeouts how long each task's runs may take (see {@link TaskTimeouts})
 * @param selfVacuum whether workers VACUUM jobq's tables where autovacuum does not
 */
public record Settings(
        Optional<DatabaseUrl> database,
        int port,
        int poolSize,
        Duration lease,
        Optional<Duration> heartbeat,
        Duration pollInterval,
        int claimBatch,
        int concurrency,
        List<QueueName> queues,
        Duration gracePeriod,
        Duration maintenanceInterval,
        boolean listen,
        long maxRequestBytes,
        String logLevel,
        Optional<WorkerId> workerId,
        Optional<Integer> metricsPort,
        TaskTimeouts taskTimeouts,
        boolean selfVacuum) {

    /** One configurable value: its environment variable, its flag, its default and what it means. */
    public enum Key {
        DATABASE_URL("--database-url", "",
                "PostgreSQL to use: postgres://user:pass@host:5432/db or jdbc:postgresql://host:5432/db?user=… "
                        + "Unset: localhost:5432, database jobq, as the current OS user or else postgres; "
                        + "the database is created if missing and the user may."),
        PORT("--port", "8000", "HTTP port of the api and all roles."),
        JOBQ_POOL_SIZE("--pool-size", "10", "Most pooled database connections per process (1-200)."),
        JOBQ_LEASE("--lease", "30s", "How long a claimed job stays leased without a heartbeat."),
        JOBQ_HEARTBEAT("--heartbeat", "", "How often a worker extends its leases. Unset: lease / 3."),
        JOBQ_POLL_INTERVAL("--poll-interval", "1s", "Fallback poll when no wake-up arrives."),
        JOBQ_CLAIM_BATCH("--claim-batch", "10", "Most jobs one claim statement takes (1-1000)."),
        JOBQ_CONCURRENCY("--concurrency", "4", "Jobs a worker runs at once, each on a virtual thread (1-1000)."),
        JOBQ_QUEUES("--queues", "default", "Comma-separated queues a worker serves."),
        JOBQ_GRACE_PERIOD("--grace-period", "30s", "On SIGTERM, how long in-hand jobs may run to finish."),
        JOBQ_MAINTENANCE_INTERVAL("--maintenance-interval", "1s",
                "How often each worker reaps expired leases and promotes due jobs (jittered)."),
        JOBQ_LISTEN("--listen", "true", "Wake workers with LISTEN/NOTIFY; false = poll only."),
        JOBQ_MAX_REQUEST_BYTES("--max-request-bytes", "1048576", "Largest accepted HTTP request body, in bytes."),
        JOBQ_LOG_LEVEL("--log-level", "INFO", "TRACE, DEBUG, INFO, WARN or ERROR."),
        JOBQ_WORKER_ID("--worker-id", "", "Name of this worker in leases and logs. Unset: host-pid-random."),
        JOBQ_METRICS_PORT("--metrics-port", "",
                "worker role only: serve GET /metrics (Prometheus) on this port. Unset: no metrics endpoint."),
        JOBQ_TASK_TIMEOUT("--task-timeout", "default=" + TaskTimeouts.builtInDefault(),
                "How long a run may take before its handler is interrupted and the job fails retryably:"
                        + " comma-separated task=duration, and default=duration (or default=none) for every other"
                        + " task, " + TaskTimeouts.builtInDefault() + " when not given. E.g. sleep=5s,report=2h."),
        JOBQ_SELF_VACUUM("--self-vacuum", "true",
                "Where autovacuum is off for jobq's tables, workers VACUUM them once dead rows pass the table's "
                        + "autovacuum threshold (one worker at a time, at most once a minute each); false = never.");

        private final String flag;
        private final String defaultValue;
        private final String description;

        Key(String flag, String defaultValue, String description) {
            this.flag = flag;
            this.defaultValue = defaultValue;
            this.description = description;
        }

        public String env() {
            return name();
        }

        public String flag() {
            return flag;
        }

        public String defaultValue() {
            return defaultValue;
        }

        public String description() {
            return description;
        }
    }

    /** Thrown for invalid configuration; its message is one line naming every bad variable or flag. */
    public static final class InvalidSettingsException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        InvalidSettingsException(String message) {
            super(message);
        }
    }

    /** The defaults alone: no environment, no flags. */
    public static Settings defaults() {
        return resolve(Map.of(), Map.of());
    }

    /**
     * Resolves every {@link Key}: the flag's value if given, else the environment variable's, else the default.
     *
     * @param env the process environment (only {@link Key} names are read)
     * @param flags values given on the command line, keyed by {@link Key}
     * @throws InvalidSettingsException naming each invalid variable or flag, its value and what was expected
     */
    public static Settings resolve(Map<String, String> env, Map<Key, String> flags) {
        Resolver r = new Resolver(env, flags);
        Optional<DatabaseUrl> database = r.optional(Key.DATABASE_URL, DatabaseUrl::parse);
        Integer port = r.get(Key.PORT, v -> ConfigValue.integer(v, 0, 65_535));
        Integer poolSize = r.get(Key.JOBQ_POOL_SIZE, v -> ConfigValue.integer(v, 1, 200));
        Duration lease = r.get(Key.JOBQ_LEASE, v -> atLeast(ConfigValue.duration(v), Duration.ofMillis(100)));
        Optional<Duration> heartbeat = r.optional(Key.JOBQ_HEARTBEAT, v -> atLeast(ConfigValue.duration(v), Duration.ofMillis(10)));
        Duration poll = r.get(Key.JOBQ_POLL_INTERVAL, v -> atLeast(ConfigValue.duration(v), Duration.ofMillis(10)));
        Integer claimBatch = r.get(Key.JOBQ_CLAIM_BATCH, v -> ConfigValue.integer(v, 1, 1000));
        Integer concurrency = r.get(Key.JOBQ_CONCURRENCY, v -> ConfigValue.integer(v, 1, 1000));
        List<QueueName> queues = r.get(Key.JOBQ_QUEUES, Settings::queues);
        Duration grace = r.get(Key.JOBQ_GRACE_PERIOD, ConfigValue::duration);
        Duration maintenance = r.get(Key.JOBQ_MAINTENANCE_INTERVAL, v -> atLeast(ConfigValue.duration(v), Duration.ofMillis(10)));
        Boolean listen = r.get(Key.JOBQ_LISTEN, ConfigValue::bool);
        Long maxRequest = r.get(Key.JOBQ_MAX_REQUEST_BYTES, v -> (long) ConfigValue.integer(v, 1024, Integer.MAX_VALUE));
        String logLevel = r.get(Key.JOBQ_LOG_LEVEL, Settings::logLevel);
        Optional<WorkerId> workerId = r.optional(Key.JOBQ_WORKER_ID, WorkerId::new);
        Optional<Integer> metricsPort = r.optional(Key.JOBQ_METRICS_PORT, v -> ConfigValue.integer(v, 0, 65_535));
        TaskTimeouts taskTimeouts = r.get(Key.JOBQ_TASK_TIMEOUT, TaskTimeouts::parse);
        Boolean selfVacuum = r.get(Key.JOBQ_SELF_VACUUM, ConfigValue::bool);
        if (r.problems.isEmpty() && lease != null && heartbeat.isPresent() && heartbeat.get().compareTo(lease) >= 0) {
            r.problems.add(r.describe(Key.JOBQ_HEARTBEAT) + " must be shorter than the lease (" + lease.toMillis() + " ms)");
        }
        if (!r.problems.isEmpty()) throw new InvalidSettingsException(String.join("; ", r.problems));
        return new Settings(database, port, poolSize, lease, heartbeat, poll, claimBatch, concurrency, queues, grace,
                maintenance, listen, maxRequest, logLevel, workerId, metricsPort, taskTimeouts, selfVacuum);
    }

    /** The heartbeat interval in force: the configured one, or lease / 3. */
    public Duration effectiveHeartbeat() {
        return heartbeat.orElse(lease.dividedBy(3));
    }

    private static Duration atLeast(Duration d, Duration min) {
        if (d.compareTo(min) < 0) throw new IllegalArgumentException("must be at least " + min.toMillis() + " ms");
        return d;
    }

    private static List<QueueName> queues(String v) {
        List<QueueName> out = new ArrayList<>();
        for (String part : v.split(",")) {
            String name = part.strip();
            if (name.isEmpty()) continue;
            QueueName q = new QueueName(name);
            if (!out.contains(q)) out.add(q);
        }
        if (out.isEmpty()) throw new IllegalArgumentException("expected at least one queue name");
        return List.copyOf(out);
    }

    private static String logLevel(String v) {
        String level = v.strip().toUpperCase(Locale.ROOT);
        if (!Arrays.asList("TRACE", "DEBUG", "INFO", "WARN", "ERROR").contains(level)) {
            throw new IllegalArgumentException("expected TRACE, DEBUG, INFO, WARN or ERROR");
        }
        return level;
    }

    /** Collects every problem instead of stopping at the first, so one run reports them all. */
    private static final class Resolver {
        final Map<String, String> env;
        final Map<Key, String> flags;
        final List<String> problems = new ArrayList<>();
        final Map<Key, Boolean> fromFlag = new LinkedHashMap<>();

        Resolver(Map<String, String> env, Map<Key, String> flags) {
            this.env = env;
            this.flags = flags;
        }

        String raw(Key key) {
            if (flags.containsKey(key) && flags.get(key) != null) {
                fromFlag.put(key, true);
                return flags.get(key);
            }
            fromFlag.put(key, false);
            String v = env.get(key.env());
            return v == null ? key.defaultValue() : v;
        }

        String describe(Key key) {
            return Boolean.TRUE.equals(fromFlag.get(key)) ? key.flag() : key.env();
        }

        <T> T get(Key key, Function<String, T> parse) {
            String v = raw(key);
            try {
                return parse.apply(v);
            } catch (RuntimeException e) {
                problems.add("invalid " + describe(key) + "=" + shown(key, v) + ": " + e.getMessage());
                return null;
            }
        }

        <T> Optional<T> optional(Key key, Function<String, T> parse) {
            String v = raw(key);
            if (v == null || v.isBlank()) return Optional.empty();
            return Optional.ofNullable(get(key, parse));
        }

        private static String shown(Key key, String v) {
            // Never echo a database password into a log line.
            return key == Key.DATABASE_URL ? "<hidden>" : "\"" + v + "\"";
        }
    }
}
