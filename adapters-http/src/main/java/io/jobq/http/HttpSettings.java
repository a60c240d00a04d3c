package io.jobq.http;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * How the HTTP API behaves.
 *
 * @param maxBodyBytes largest accepted request body, in bytes; a larger one is answered 413 without
 *     being read further. At least 1 KiB. Default: 1 MiB (1,048,576).
 * @param retryAfter the {@code Retry-After} a 503 (store unavailable) carries, whole seconds, at least 1 s.
 *     Default: 5 s.
 * @param metricsMaxAge how long the database-derived gauges of {@code /metrics} (job counts, oldest
 *     runnable age, largest backlogs, cleanup) are reused before the next scrape queries the store again; zero
 *     queries on every scrape. Default: 1 s.
 * @param topBacklogs how many of the largest (queue, tenant) backlogs {@code /metrics} exports, 1..100.
 *     Default: 10.
 */
public record HttpSettings(long maxBodyBytes, Duration retryAfter, Duration metricsMaxAge, int topBacklogs) {

    /** 1 MiB body limit, Retry-After 5 s, gauges reused for 1 s, top 10 backlogs. */
    public static final HttpSettings DEFAULTS = new HttpSettings(1024 * 1024, Duration.ofSeconds(5), Duration.ofSeconds(1), 10);

    /** @throws IllegalArgumentException listing every field out of range at once */
    public HttpSettings {
        Objects.requireNonNull(retryAfter, "retryAfter");
        Objects.requireNonNull(metricsMaxAge, "metricsMaxAge");
        List<String> problems = new ArrayList<>();
        if (maxBodyBytes < 1024) problems.add("maxBodyBytes must be >= 1024, was " + maxBodyBytes);
        if (retryAfter.toSeconds() < 1) problems.add("retryAfter must be >= 1s, was " + retryAfter);
        if (metricsMaxAge.isNegative()) problems.add("metricsMaxAge must not be negative, was " + metricsMaxAge);
        if (topBacklogs < 1 || topBacklogs > 100) problems.add("topBacklogs must be 1-100, was " + topBacklogs);
        if (!problems.isEmpty()) throw new IllegalArgumentException(String.join("; ", problems));
    }

    public HttpSettings withMaxBodyBytes(long bytes) {
        return new HttpSettings(bytes, retryAfter, metricsMaxAge, topBacklogs);
    }

    public HttpSettings withRetryAfter(Duration after) {
        return new HttpSettings(maxBodyBytes, after, metricsMaxAge, topBacklogs);
    }

    public HttpSettings withMetricsMaxAge(Duration maxAge) {
        return new HttpSettings(maxBodyBytes, retryAfter, maxAge, topBacklogs);
    }

    public HttpSettings withTopBacklogs(int n) {
        return new HttpSettings(maxBodyBytes, retryAfter, metricsMaxAge, n);
    }
}
