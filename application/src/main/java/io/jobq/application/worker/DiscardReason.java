package io.jobq.application.worker;

/**
 * Why a worker threw away the outcome of a run instead of recording it. In every case the job is
 * left to the store: another run owns it already, or its lease will lapse and maintenance reaps it
 * (which counts as an attempt), so at-least-once delivery holds.
 */
public enum DiscardReason {
    /** A heartbeat reported that the run no longer holds its lease (reaped or re-claimed). */
    LEASE_LOST,
    /** complete/fail was refused: the row no longer carries this run's fencing token. */
    WRITE_REJECTED,
    /**
     * complete/fail kept failing (store unavailable) after its retries, or its row stayed held by another
     * transaction for a whole lease, or shutdown gave up on it while held; the lease will lapse.
     */
    WRITE_FAILED,
    /** The shutdown grace period ended while the handler was still running; it was interrupted. */
    SHUTDOWN
}
