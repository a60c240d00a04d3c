package io.jobq.bench;

import io.jobq.postgres.LockMode;
import io.jobq.postgres.PostgresJobStore;

/** The rows of the throughput and floor tables: how a claim locks, and how many jobs it takes. */
enum ClaimStrategy {
    /** Plain {@code FOR UPDATE}: every claimer queues behind the same head row. */
    WAIT(LockMode.WAIT, 1, "FOR UPDATE (blocking)"),
    /** {@code FOR UPDATE SKIP LOCKED}, one job per claim. */
    SKIP_LOCKED(LockMode.SKIP_LOCKED, 1, "FOR UPDATE SKIP LOCKED"),
    /** {@code FOR UPDATE SKIP LOCKED}, up to ten jobs per claim. */
    SKIP_LOCKED_BATCH(LockMode.SKIP_LOCKED, 10, "SKIP LOCKED, 10 jobs per claim");

    final LockMode lockMode;
    final int batch;
    final String label;

    ClaimStrategy(LockMode lockMode, int batch, String label) {
        this.lockMode = lockMode;
        this.batch = batch;
        this.label = label;
    }

    /**
     * The store options jobq runs with in this row of the throughput table: the defaults (fair order)
     * with this lock mode. One place, so the floor's statements are checked against the store the
     * throughput experiment actually measures.
     */
    PostgresJobStore.Options storeOptions() {
        return PostgresJobStore.Options.DEFAULTS.withLockMode(lockMode);
    }
}
