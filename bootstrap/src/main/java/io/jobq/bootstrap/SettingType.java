package io.jobq.bootstrap;

import io.jobq.application.config.ConfigValue;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.lease.WorkerId;
import io.jobq.postgres.JobqSchema;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The kind of value a {@link Setting} holds: how its text is read, how a value is written back as text
 * (for defaults in {@code --help} and README), and the placeholder {@code --help} shows for it.
 *
 * @param label the placeholder after the flag in {@code --help}, e.g. {@code DURATION} in {@code --lease=DURATION}
 * @param parser reads the text of a variable or flag; throws IllegalArgumentException saying what was expected
 * @param printer writes a value as text that {@code parser} reads back to the same value
 * @param echo how a bad value is quoted in an error message; a secret's is never shown
 */
record SettingType<T>(String label, Function<String, T> parser, Function<T, String> printer, Function<String, String> echo) {
    private static final List<String> LEVELS = List.of("TRACE", "DEBUG", "INFO", "WARN", "ERROR");
    /** The levels {@link #logLevel()} accepts, as error messages and docs name them: "TRACE, …, WARN or ERROR". */
    static final String LOG_LEVELS = String.join(", ", LEVELS.subList(0, LEVELS.size() - 1)) + " or " + LEVELS.getLast();

    private static <T> SettingType<T> of(String label, Function<String, T> parser, Function<T, String> printer) {
        return new SettingType<>(label, parser, printer, v -> "\"" + v + "\"");
    }

    T parse(String text) {
        return parser.apply(text);
    }

    String print(T value) {
        return printer.apply(value);
    }

    /** The same values, or none: blank text (or no text at all) means empty. */
    static <T> SettingType<Optional<T>> optional(SettingType<T> inner) {
        return new SettingType<>(inner.label,
                v -> v.isBlank() ? Optional.empty() : Optional.of(inner.parse(v)),
                v -> v.map(inner::print).orElse(""),
                inner.echo);
    }

    /** A decimal integer in [min, max]. */
    static SettingType<Integer> integer(String label, int min, int max) {
        return of(label, v -> ConfigValue.integer(v, min, max), String::valueOf);
    }

    /** A number of bytes from {@code min} to 2^31 - 1. */
    static SettingType<Long> bytes(long min) {
        return of("BYTES", v -> (long) ConfigValue.integer(v, Math.toIntExact(min), Integer.MAX_VALUE), String::valueOf);
    }

    /** A duration of at least {@code min}, in any form {@link ConfigValue#duration} reads. */
    static SettingType<Duration> duration(Duration min) {
        return of("DURATION", v -> {
            Duration d = ConfigValue.duration(v);
            if (d.compareTo(min) < 0) throw new IllegalArgumentException("must be at least " + min.toMillis() + " ms");
            return d;
        }, ConfigValue::text);
    }

    /** {@code true} or {@code false} (also 1/0, yes/no, on/off). */
    static SettingType<Boolean> bool() {
        return of("BOOL", ConfigValue::bool, String::valueOf);
    }

    /** Comma-separated queue names, at least one; repeats are dropped, order kept. */
    static SettingType<List<QueueName>> queues() {
        return of("a,b", v -> {
            List<QueueName> out = new ArrayList<>();
            for (String part : v.split(",")) {
                String name = part.strip();
                if (name.isEmpty()) continue;
                QueueName q = new QueueName(name);
                if (!out.contains(q)) out.add(q);
            }
            if (out.isEmpty()) throw new IllegalArgumentException("expected at least one queue name");
            return List.copyOf(out);
        }, qs -> qs.stream().map(QueueName::toString).collect(Collectors.joining(",")));
    }

    /** One of Logback's levels, upper-cased. */
    static SettingType<String> logLevel() {
        return of("LEVEL", v -> {
            String level = v.strip().toUpperCase(Locale.ROOT);
            if (!LEVELS.contains(level)) throw new IllegalArgumentException("expected " + LOG_LEVELS);
            return level;
        }, Function.identity());
    }

    /** A worker's name in leases and logs. */
    static SettingType<WorkerId> workerId() {
        return of("ID", WorkerId::new, WorkerId::toString);
    }

    /** A {@link JobqSchema}: a lower-case PostgreSQL identifier. */
    static SettingType<JobqSchema> schema() {
        return of("SCHEMA", JobqSchema::of, JobqSchema::name);
    }

    /** {@link TaskTimeouts}' text form. */
    static SettingType<TaskTimeouts> taskTimeouts() {
        return of("task=DURATION,…", TaskTimeouts::parse, TaskTimeouts::toString);
    }

    /**
     * A key (an API key), or none when the variable is absent: never echoed in an error nor printed;
     * {@code AccessKeys} judges its strength. Set but blank is refused, not taken for "none": an empty secret
     * in a deployment must not leave the API open by accident.
     */
    static SettingType<Optional<String>> secret() {
        return new SettingType<>("KEY", v -> {
            if (v.isBlank()) throw new IllegalArgumentException("is set but empty: give a key, or unset it to run the API open");
            return Optional.of(v.strip());
        }, v -> v.isPresent() ? "<hidden>" : "", v -> "<hidden>");
    }

    /** A file's path; read by whoever uses the setting. */
    static SettingType<java.nio.file.Path> path() {
        return of("FILE", java.nio.file.Path::of, java.nio.file.Path::toString);
    }

    /** A host name or IP address to bind. */
    static SettingType<String> host() {
        return of("HOST", v -> {
            String host = v.strip();
            if (host.isEmpty() || !host.matches("[A-Za-z0-9.:\\-\\[\\]]+")) {
                throw new IllegalArgumentException("expected an IP address or host name such as 127.0.0.1 or 0.0.0.0");
            }
            return host;
        }, Function.identity());
    }

    /** A PostgreSQL URL; secret, since it may hold a password: a bad one is never echoed. */
    static SettingType<DatabaseUrl> databaseUrl() {
        return new SettingType<>("URL", DatabaseUrl::parse, DatabaseUrl::masked, v -> "<hidden>");
    }
}
