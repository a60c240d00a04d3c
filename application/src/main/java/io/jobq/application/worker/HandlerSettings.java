package io.jobq.application.worker;

import io.jobq.application.config.ConfigValue;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * The configuration a {@link JobHandlerProvider} builds its handlers with: a read-only map of names to
 * text, with typed getters whose errors name the key. The launcher ({@code jobq worker}) fills it with
 * every environment variable and system property whose name starts with {@value #PREFIX} (a system
 * property wins over a variable of the same name), so a plug-in jar reads
 * {@code JOBQ_HANDLER_SMTP_HOST} without a flag of its own. An application that embeds the worker
 * builds one with {@link #of(Map)}, or passes its objects to its handlers' constructors instead.
 *
 * <p>Values read as the launcher's own settings do ({@link ConfigValue}): durations like {@code 30s},
 * {@code 500ms} or {@code PT30S}; booleans true/false, 1/0, yes/no, on/off. Errors never quote the value:
 * a handler setting may be a secret.
 *
 * <p>Immutable.
 */
public final class HandlerSettings {
    /** The prefix of the environment variables and system properties the launcher passes to handlers. */
    public static final String PREFIX = "JOBQ_HANDLER_";

    /** No settings at all. */
    public static final HandlerSettings EMPTY = new HandlerSettings(Map.of());

    private final Map<String, String> values;

    private HandlerSettings(Map<String, String> values) {
        this.values = values;
    }

    /**
     * Exactly {@code values}, copied.
     *
     * @throws NullPointerException if a key or value is null
     */
    public static HandlerSettings of(Map<String, String> values) {
        return new HandlerSettings(Map.copyOf(values));
    }

    /**
     * The entries of {@code environment} and {@code systemProperties} whose names start with
     * {@value #PREFIX}, names kept whole; a system property overrides the variable of the same name.
     */
    public static HandlerSettings fromEnvironment(Map<String, String> environment, Properties systemProperties) {
        Map<String, String> picked = new TreeMap<>();
        environment.forEach((k, v) -> {
            if (k.startsWith(PREFIX)) picked.put(k, v);
        });
        for (String name : systemProperties.stringPropertyNames()) {
            if (name.startsWith(PREFIX)) picked.put(name, systemProperties.getProperty(name));
        }
        return of(picked);
    }

    /** Every setting, read-only. */
    public Map<String, String> asMap() {
        return values;
    }

    /** The text of {@code key}, if set. */
    public Optional<String> get(String key) {
        return Optional.ofNullable(values.get(Objects.requireNonNull(key, "key")));
    }

    /** @throws IllegalArgumentException naming {@code key} if it is not set */
    public String require(String key) {
        return get(key).orElseThrow(() -> new IllegalArgumentException(key + " is required but not set"));
    }

    /**
     * A decimal integer from {@code min} to {@code max}, or {@code fallback} when not set.
     *
     * @throws IllegalArgumentException naming {@code key} if the text is not such an integer
     */
    public int getInt(String key, int min, int max, int fallback) {
        return parse(key, v -> ConfigValue.integer(v, min, max)).orElse(fallback);
    }

    /**
     * A boolean, or {@code fallback} when not set.
     *
     * @throws IllegalArgumentException naming {@code key} if the text is not a boolean
     */
    public boolean getBoolean(String key, boolean fallback) {
        return parse(key, ConfigValue::bool).orElse(fallback);
    }

    /**
     * A duration (0 to 365 days), or {@code fallback} when not set.
     *
     * @throws IllegalArgumentException naming {@code key} if the text is not a duration
     */
    public Duration getDuration(String key, Duration fallback) {
        return parse(key, ConfigValue::duration).orElse(fallback);
    }

    private <T> Optional<T> parse(String key, Function<String, T> parser) {
        Optional<String> text = get(key);
        try {
            return text.map(parser);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("invalid " + key + ": " + e.getMessage(), e);
        }
    }

    /** The names only: values may be secrets. */
    @Override
    public String toString() {
        return "HandlerSettings" + new TreeMap<>(values).keySet();
    }
}
