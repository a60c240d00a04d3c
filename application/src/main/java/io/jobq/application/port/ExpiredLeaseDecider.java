package io.jobq.application.port;

import io.jobq.domain.retry.FailureKind;
import io.jobq.domain.retry.RetryDecision;
import io.jobq.domain.retry.RetryPolicy;
import java.util.Objects;

/**
 * What becomes of a run whose lease expired, asked by {@link JobStore#reapExpiredLeases} about each run it
 * is about to reap: the store reads the run's attempt numbers and writes the answer, deciding nothing
 * itself. The PostgreSQL store asks while its reaping transaction holds the run's row lock, and writes the
 * answer fenced on the attempt it asked about, so a run is reaped once, by the decision made for it.
 *
 * <p>Workers pass {@link #by(RetryPolicy)}; tests pass a lambda to make a store obey any answer.
 */
@FunctionalInterface
public interface ExpiredLeaseDecider {

    /**
     * @param attempt the attempt whose lease expired, at least 1 (the claim that started it counted it)
     * @param maxAttempts how many attempts the job is allowed, at least 1
     * @return the decision the store writes for this run; never null
     */
    RetryDecision decide(int attempt, int maxAttempts);

    /** Decides as {@code policy} does for {@link FailureKind#LEASE_EXPIRED}: retry after backoff, or dead when out of attempts. */
    static ExpiredLeaseDecider by(RetryPolicy policy) {
        Objects.requireNonNull(policy, "policy");
        return (attempt, maxAttempts) -> policy.decide(attempt, maxAttempts, FailureKind.LEASE_EXPIRED);
    }
}
