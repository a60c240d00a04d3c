package io.jobq.postgres;

/** How a claim treats rows another claimer has locked. Production uses {@link #SKIP_LOCKED}. */
public enum LockMode {
    /** {@code FOR UPDATE SKIP LOCKED}: take the next unlocked rows, so N workers claim N different jobs at once. */
    SKIP_LOCKED,
    /** {@code FOR UPDATE}: wait for the locker to commit, then re-check. Every claimer queues behind the same head row. */
    WAIT
}
