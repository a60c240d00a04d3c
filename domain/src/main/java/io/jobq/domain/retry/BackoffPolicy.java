package io.jobq.domain.retry;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.random.RandomGenerator;

/**
 * Exponential backoff with full jitter: the retry after failed attempt {@code n} waits a delay drawn
 * uniformly from {@code [0, min(cap, base · 2^(n-1))]}, at millisecond resolution.
 *
 * <p>Why full jitter: jobs that fail together (a downstream outage) would otherwise retry in
 * lockstep and hit the recovering service in waves; spreading each delay over the whole window
 * de-synchronises them (Brooker, "Exponential Backoff And Jitter", AWS Architecture Blog, 2015).
 *
 * <p>Worked numbers with the defaults (base 1 s, cap 10 min): attempt 1 waits in [0, 1 s],
 * attempt 4 in [0, 8 s], attempt 10 in [0, 512 s], attempt 11 and every later one in
 * [0, 600 s]. The ceiling is computed without overflow for every attempt up to
 * {@link Integer#MAX_VALUE}: once {@code base · 2^(n-1)} would exceed the cap, the cap is used.
 *
 * @param base the ceiling for attempt 1; positive
 * @param cap the largest ceiling; at least {@code base}, at most 365 days
 * @param random the source of jitter; inject a seeded one in tests. A store draws from many threads at
 *     once (every failing run, every reaper), so a shared policy needs a generator that is safe for
 *     concurrent use; {@link #defaults()} and {@link #of} use one. (The JDK's default
 *     {@code RandomGenerator} is not: racing callers can read the same state and draw the same delay,
 *     which puts jobs back in lockstep, or corrupt it.)
 */
public record BackoffPolicy(Duration base, Duration cap, RandomGenerator random) {
    /** Ceiling for attempt 1 by default: 1 s. */
    public static final Duration DEFAULT_BASE = Duration.ofSeconds(1);
    /** Largest ceiling by default: 10 min. */
    public static final Duration DEFAULT_CAP = Duration.ofMinutes(10);
    /** Largest cap accepted: 365 days, so every delay fits a PostgreSQL interval and a long of ms. */
    public static final Duration MAX_CAP = Duration.ofDays(365);

    /** @throws IllegalArgumentException if base is not positive, or cap is below base or above 365 days */
    public BackoffPolicy {
        Objects.requireNonNull(base, "base");
        Objects.requireNonNull(cap, "cap");
        Objects.requireNonNull(random, "random");
        if (base.toMillis() < 1) throw new IllegalArgumentException("backoff base must be >= 1 ms, was " + base);
        if (cap.compareTo(base) < 0) {
            throw new IllegalArgumentException("backoff cap must be >= base (" + base + "), was " + cap);
        }
        if (cap.compareTo(MAX_CAP) > 0) {
            throw new IllegalArgumentException("backoff cap must be <= " + MAX_CAP + ", was " + cap);
        }
    }

    /** Draws from the calling thread's {@link ThreadLocalRandom}: safe for concurrent use, no contention. */
    private static final RandomGenerator THREAD_SAFE = () -> ThreadLocalRandom.current().nextLong();

    /** Base 1 s, cap 10 min, jitter safe for concurrent use. */
    public static BackoffPolicy defaults() {
        return of(DEFAULT_BASE, DEFAULT_CAP);
    }

    /** The given base and cap, jitter safe for concurrent use. */
    public static BackoffPolicy of(Duration base, Duration cap) {
        return new BackoffPolicy(base, cap, THREAD_SAFE);
    }

    /**
     * The upper bound of the window for a retry after failed attempt {@code attempt}:
     * {@code min(cap, base · 2^(attempt-1))}.
     *
     * @throws IllegalArgumentException if {@code attempt < 1}
     */
    public Duration ceiling(int attempt) {
        if (attempt < 1) throw new IllegalArgumentException("attempt must be >= 1, was " + attempt);
        long baseMs = base.toMillis();
        long capMs = cap.toMillis();
        int doublings = attempt - 1;
        // base << doublings overflows or passes the cap exactly when base > cap >> doublings.
        if (doublings >= Long.SIZE - 1 || baseMs > (capMs >> doublings)) return Duration.ofMillis(capMs);
        return Duration.ofMillis(baseMs << doublings);
    }

    /**
     * Draws the delay before the retry after failed attempt {@code attempt}: uniform in
     * {@code [0, ceiling(attempt)]}, whole milliseconds, never negative.
     *
     * @throws IllegalArgumentException if {@code attempt < 1}
     */
    public Duration delay(int attempt) {
        long ceilingMs = ceiling(attempt).toMillis();
        return Duration.ofMillis(random.nextLong(0, ceilingMs + 1));
    }
}
