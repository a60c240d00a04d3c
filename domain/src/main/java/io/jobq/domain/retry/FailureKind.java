package io.jobq.domain.retry;

/**
 * Why an attempt of a job failed. {@link RetryPolicy#decide} treats each kind as documented here; the
 * kind is the only thing about a failure that decides between retry and dead (the message does not).
 */
public enum FailureKind {
    /** The handler threw, or failed in a way retrying may fix (a downstream outage, a missing handler). Retryable. */
    ERROR,
    /**
     * Retrying cannot help: the handler threw {@code PermanentJobFailure}, or the payload cannot be bound.
     * Dead at once, whatever attempts are left.
     */
    PERMANENT,
    /** The run outlived its task's timeout and was interrupted. Retryable: the next attempt may be quicker. */
    TIMEOUT,
    /**
     * The lease ran out before the run recorded an outcome: the worker crashed, froze or lost the database.
     * Retryable, and it counts as an attempt, so a job that kills every worker that runs it ends dead.
     */
    LEASE_EXPIRED
}
