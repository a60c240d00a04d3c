package io.jobq.http;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * How the HTTP API behaves. Build with {@code HttpSettings.builder().retryAfter(…).build()}; fields not
 * set keep the defaults ({@link #DEFAULTS}).
 *
 * @param maxBodyBytes largest accepted request body, in bytes; a larger one is answered 413 without
 *     being read further. At least {@link #MIN_BODY_BYTES} (1 KiB). Default: 1 MiB (1,048,576).
 * @param retryAfter the {@code Retry-After} a 503 (store unavailable) carries, whole seconds, at least 1 s.
 *     Default: 5 s.
 * @param metricsMaxAge how long the database-derived gauges of {@code /metrics} (job counts, oldest
 *     runnable age, largest backlogs, cleanup) are reused before the next scrape queries the store again; zero
 *     queries on every scrape. Default: 1 s.
 * @param topBacklogs how many of the largest (queue, tenant) backlogs {@code /metrics} exports, 1..100.
 *     Default: 10.
 * @param keys who may call the API. Default: {@link AccessKeys#OPEN}
 */
public record HttpSettings(long maxBodyBytes, Duration retryAfter, Duration metricsMaxAge, int topBacklogs, AccessKeys keys) {

    /** The smallest body limit: 1 KiB, so that every ordinary request still fits. */
    public static final long MIN_BODY_BYTES = 1024;

    /** 1 MiB body limit, Retry-After 5 s, gauges reused for 1 s, top 10 backlogs: {@code builder().build()}. */
    public static final HttpSettings DEFAULTS = builder().build();

    /** @throws IllegalArgumentException listing every field out of range at once */
    public HttpSettings {
        Objects.requireNonNull(retryAfter, "retryAfter");
        Objects.requireNonNull(metricsMaxAge, "metricsMaxAge");
        Objects.requireNonNull(keys, "keys");
        List<String> problems = new ArrayList<>();
        if (maxBodyBytes < MIN_BODY_BYTES) problems.add("maxBodyBytes must be >= " + MIN_BODY_BYTES + ", was " + maxBodyBytes);
        if (retryAfter.toSeconds() < 1) problems.add("retryAfter must be >= 1s, was " + retryAfter);
        if (metricsMaxAge.isNegative()) problems.add("metricsMaxAge must not be negative, was " + metricsMaxAge);
        if (topBacklogs < 1 || topBacklogs > 100) problems.add("topBacklogs must be 1-100, was " + topBacklogs);
        if (!problems.isEmpty()) throw new IllegalArgumentException(String.join("; ", problems));
    }

    /** A builder holding the defaults. */
    public static Builder builder() {
        return new Builder();
    }

    /** Collects fields; {@link #build()} validates them together. Its initial values are the defaults. */
    public static final class Builder {
        private long maxBodyBytes = 1024 * 1024;
        private Duration retryAfter = Duration.ofSeconds(5);
        private Duration metricsMaxAge = Duration.ofSeconds(1);
        private int topBacklogs = 10;
        private AccessKeys keys = AccessKeys.OPEN;

        private Builder() {}

        /** Largest accepted request body, at least {@value HttpSettings#MIN_BODY_BYTES} bytes. */
        public Builder maxBodyBytes(long bytes) {
            maxBodyBytes = bytes;
            return this;
        }

        /** The {@code Retry-After} of a 503, whole seconds, at least 1 s. */
        public Builder retryAfter(Duration after) {
            retryAfter = after;
            return this;
        }

        /** How long {@code /metrics} reuses its database-derived gauges; zero: query on every scrape. */
        public Builder metricsMaxAge(Duration maxAge) {
            metricsMaxAge = maxAge;
            return this;
        }

        /** How many of the largest (queue, tenant) backlogs {@code /metrics} exports, 1..100. */
        public Builder topBacklogs(int n) {
            topBacklogs = n;
            return this;
        }

        /** Who may call the API; default {@link AccessKeys#OPEN}. */
        public Builder keys(AccessKeys value) {
            keys = value;
            return this;
        }

        /** @throws IllegalArgumentException listing every field out of range at once */
        public HttpSettings build() {
            return new HttpSettings(maxBodyBytes, retryAfter, metricsMaxAge, topBacklogs, keys);
        }
    }
}
