package io.jobq.domain.retry;

import java.util.Objects;

/**
 * The one place that decides between retry and dead, for every kind of failure: a handler's error or
 * permanent failure, a timeout, and a lease that expired. Stores write the decision they are given; they
 * hold no policy of their own.
 *
 * <p>The rule, for failed attempt {@code n} of a job allowed {@code max} attempts:
 * <ol>
 *   <li>{@link FailureKind#PERMANENT} → dead ({@link RetryDecision.Cause#PERMANENT_FAILURE}), whatever is left;
 *   <li>else {@code n >= max} → dead ({@link RetryDecision.Cause#OUT_OF_ATTEMPTS});
 *   <li>else retry after a delay drawn from the {@link BackoffPolicy}: uniform in {@code [0, min(cap, base·2^(n-1))]}.
 * </ol>
 * No delay is drawn for a final failure. Worked numbers with the default backoff (base 1 s, cap 10 min) and
 * max 5: attempt 1 fails with an error → retry within [0, 1 s]; attempt 3 times out → within [0, 4 s];
 * attempt 5's lease expires → dead, out of attempts; attempt 1 fails permanently → dead at once.
 *
 * <p>{@code n} may exceed {@code max}: a dead job retried by an operator gets a fresh budget by raising
 * {@code max}, and a row edited by hand may hold anything; both follow the same rule.
 *
 * @param backoff the delays between attempts
 */
public record RetryPolicy(BackoffPolicy backoff) {

    public RetryPolicy {
        Objects.requireNonNull(backoff, "backoff");
    }

    /** {@link BackoffPolicy#defaults()}: base 1 s, cap 10 min. */
    public static RetryPolicy defaults() {
        return new RetryPolicy(BackoffPolicy.defaults());
    }

    /**
     * Decides what becomes of a job whose attempt {@code attempt} failed.
     *
     * @param attempt the failed attempt, 1-based (the job's {@code attempts} after the claim that started it)
     * @param maxAttempts how many attempts the job is allowed, at least 1
     * @param kind why it failed
     * @throws IllegalArgumentException if {@code attempt < 1} or {@code maxAttempts < 1}
     */
    public RetryDecision decide(int attempt, int maxAttempts, FailureKind kind) {
        Objects.requireNonNull(kind, "kind");
        if (attempt < 1) throw new IllegalArgumentException("attempt must be >= 1, was " + attempt);
        if (maxAttempts < 1) throw new IllegalArgumentException("maxAttempts must be >= 1, was " + maxAttempts);
        if (kind == FailureKind.PERMANENT) return new RetryDecision.Dead(RetryDecision.Cause.PERMANENT_FAILURE);
        if (attempt >= maxAttempts) return new RetryDecision.Dead(RetryDecision.Cause.OUT_OF_ATTEMPTS);
        return new RetryDecision.RetryAfter(backoff.delay(attempt));
    }
}
