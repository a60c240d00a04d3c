package io.jobq.domain.job;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;

/**
 * The limits on a new job's fields, in one place for every door a job comes in by (the HTTP API, the
 * Java client's {@code NewJob} and {@code NewJobBatch}), so no two doors can disagree. Each check throws
 * {@link IllegalArgumentException} naming the field as the HTTP API spells it and quoting at most a
 * short prefix of the value ({@link StoredText#excerpt}).
 *
 * <ul>
 *   <li>{@code max_attempts}: an integer 1..{@value Job#MAX_MAX_ATTEMPTS}; default {@value Job#DEFAULT_MAX_ATTEMPTS}.
 *   <li>{@code delay_seconds}: 0 to 31,536,000 seconds (365 days), millisecond resolution.
 *   <li>{@code idempotency_key}: 1..{@value #MAX_IDEMPOTENCY_KEY_LENGTH} UTF-16 code units, no NUL, no lone surrogate.
 *   <li>payload: storable text ({@link StoredText#requireStorable}) that PostgreSQL can render back and a
 *       worker can parse ({@link JsonNumbers#unreadablePayload}); every number in a request, in any field,
 *       also passes {@link JsonNumbers#unacceptableNumber}.
 * </ul>
 *
 * The {@code BigDecimal} forms take a number as a request wrote it, exactly, and never print it in full
 * or expand it: {@code 1e2147483647} costs no more than {@code 3}.
 */
public final class JobLimits {
    /** Longest delay: 365 days (31,536,000 s). */
    public static final Duration MAX_DELAY = Duration.ofDays(365);
    /** Longest idempotency key, in UTF-16 code units. */
    public static final int MAX_IDEMPOTENCY_KEY_LENGTH = 255;

    private static final BigDecimal MAX_DELAY_SECONDS = BigDecimal.valueOf(MAX_DELAY.toSeconds());

    private JobLimits() {}

    /**
     * @return {@code maxAttempts}, when in 1..100
     * @throws IllegalArgumentException otherwise
     */
    public static int requireMaxAttempts(int maxAttempts) {
        if (maxAttempts < 1 || maxAttempts > Job.MAX_MAX_ATTEMPTS) throw badMaxAttempts(Integer.toString(maxAttempts));
        return maxAttempts;
    }

    /** Highest {@code priority}: 0 (the default) to 9, higher first within a tenant. */
    public static final int MAX_PRIORITY = 9;

    /**
     * @return {@code priority}, when in 0..{@value #MAX_PRIORITY}
     * @throws IllegalArgumentException naming {@code priority} otherwise
     */
    public static int requirePriority(int priority) {
        if (priority < 0 || priority > MAX_PRIORITY) throw badPriority(Integer.toString(priority));
        return priority;
    }

    /**
     * {@code priority} from an exact number: {@code 3} and {@code 3.0} are 3.
     *
     * @throws IllegalArgumentException if it is not an integer in 0..9
     */
    public static int priorityOf(BigDecimal exact) {
        if (exact.signum() < 0 || exact.compareTo(BigDecimal.valueOf(MAX_PRIORITY)) > 0 || exact.stripTrailingZeros().scale() > 0) {
            throw badPriority(StoredText.excerpt(exact.toString()));
        }
        return exact.intValueExact();
    }

    private static IllegalArgumentException badPriority(String was) {
        return new IllegalArgumentException("priority must be an integer 0-" + MAX_PRIORITY + " (higher runs first within"
                + " the tenant), was " + was);
    }

    /**
     * {@code max_attempts} from an exact number: {@code 3} and {@code 3.0} are 3.
     *
     * @throws IllegalArgumentException if it is not an integer in 1..100
     */
    public static int maxAttemptsOf(BigDecimal exact) {
        // range first: after it, the value has at most three integer digits and is cheap to inspect
        if (exact.compareTo(BigDecimal.ONE) < 0 || exact.compareTo(BigDecimal.valueOf(Job.MAX_MAX_ATTEMPTS)) > 0
                || exact.stripTrailingZeros().scale() > 0) {
            throw badMaxAttempts(StoredText.excerpt(exact.toString()));
        }
        return exact.intValueExact();
    }

    /**
     * @return {@code delay}, when in 0..365 days
     * @throws IllegalArgumentException otherwise
     */
    public static Duration requireDelay(Duration delay) {
        if (delay.isNegative() || delay.compareTo(MAX_DELAY) > 0) {
            BigDecimal seconds = BigDecimal.valueOf(delay.getSeconds()).add(BigDecimal.valueOf(delay.getNano(), 9));
            throw badDelay(seconds.stripTrailingZeros().toPlainString());
        }
        return delay;
    }

    /**
     * {@code delay_seconds} from an exact number of seconds, to the millisecond, finer digits dropped:
     * {@code 1.5} is 1,500 ms, {@code 0.0009} is 0.
     *
     * @throws IllegalArgumentException if it is negative or above 31,536,000
     */
    public static Duration delayOfSeconds(BigDecimal seconds) {
        if (seconds.signum() < 0 || seconds.compareTo(MAX_DELAY_SECONDS) > 0) throw badDelay(StoredText.excerpt(seconds.toString()));
        // in range (a zero may still carry any exponent, so it is not scaled)
        return seconds.signum() == 0 ? Duration.ZERO : Duration.ofMillis(seconds.movePointRight(3).longValue());
    }

    /**
     * The delay from {@code now} until {@code runAt}, to the millisecond: zero for an instant already past
     * (the job runs at once).
     *
     * @throws IllegalArgumentException naming run_at, for an instant more than 365 days after {@code now}
     */
    public static Duration delayUntil(Instant runAt, Instant now) {
        if (!runAt.isAfter(now)) return Duration.ZERO;
        if (runAt.isAfter(now.plus(MAX_DELAY))) {
            throw new IllegalArgumentException("run_at must be at most " + MAX_DELAY.toDays() + " days ahead, was " + runAt);
        }
        return Duration.ofMillis(Duration.between(now, runAt).toMillis());
    }

    /**
     * @return {@code key}, when it has 1..255 UTF-16 code units and no NUL or lone surrogate
     * @throws IllegalArgumentException otherwise
     */
    public static String requireIdempotencyKey(String key) {
        StoredText.requireStorable("idempotency_key", key);
        if (key.isEmpty() || key.length() > MAX_IDEMPOTENCY_KEY_LENGTH) {
            throw new IllegalArgumentException("idempotency_key must be 1-" + MAX_IDEMPOTENCY_KEY_LENGTH + " characters, was " + key.length());
        }
        return key;
    }

    private static IllegalArgumentException badMaxAttempts(String shown) {
        return new IllegalArgumentException("max_attempts must be an integer 1-" + Job.MAX_MAX_ATTEMPTS + ", was " + shown);
    }

    private static IllegalArgumentException badDelay(String shown) {
        return new IllegalArgumentException("delay_seconds must be 0-" + MAX_DELAY.toSeconds() + ", was " + shown);
    }
}
