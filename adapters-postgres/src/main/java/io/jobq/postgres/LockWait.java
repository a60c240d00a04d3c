package io.jobq.postgres;

import java.sql.Statement;
import org.jooq.DSLContext;

/**
 * How long the queue's own upkeep (promotion, schedule firing), and the outcomes a claim carries
 * ({@link PostgresJobStore#recordOutcomesThenClaim}), wait for a row another transaction holds:
 * at most {@value #MAX_MS} ms ({@code lock_timeout}, for the rest of the transaction). An enqueue holds its
 * tenant's row for its whole transaction: a few milliseconds through the API, which is worth waiting for, or
 * as long as an application likes through {@link JobClient}, which must not stall the upkeep of every other
 * tenant. A statement that waits longer fails with SQLSTATE 55P03 ({@link #ranOut}); its transaction rolled
 * back, and the caller passes the row by until a later pass.
 */
final class LockWait {
    /** The longest one lock wait lasts, in ms. */
    static final int MAX_MS = 100;
    /** SQLSTATE of a lock wait that ran past lock_timeout. */
    private static final String LOCK_NOT_AVAILABLE = "55P03";

    private LockWait() {}

    /** Bounds every lock wait of {@code tx}'s transaction to {@link #MAX_MS} (SET LOCAL: it ends with the transaction). */
    static void limit(DSLContext tx) {
        limit(tx, MAX_MS);
    }

    /**
     * As {@link #limit(DSLContext)}, to {@code ms} (at least 1): {@link #bound} on the transaction's connection,
     * through JDBC rather than as a jOOQ query, since nobody reads its answer (jOOQ's parsing of a template
     * and reading of result metadata for it showed in profiles of the claim loop, issue 14).
     */
    static void limit(DSLContext tx, int ms) {
        String bound = bound(ms);
        tx.connection(c -> {
            try (Statement s = c.createStatement()) {
                s.execute(bound);
            }
        });
    }

    /**
     * The statement that bounds every later lock wait of its transaction to {@code ms} ms, for a text that
     * runs it first (the claim loop's carried outcomes, {@link PostgresJobStore#recordOutcomesThenClaim}).
     *
     * @throws IllegalArgumentException if {@code ms} is below 1
     */
    static String bound(int ms) {
        if (ms < 1) throw new IllegalArgumentException("a lock wait bound must be at least 1 ms, was " + ms);
        return "SET LOCAL lock_timeout = '" + ms + "ms'";
    }

    /** Whether {@code e} is a lock wait that ran past {@link #limit}. */
    static boolean ranOut(Throwable e) {
        return LOCK_NOT_AVAILABLE.equals(StoreErrors.sqlState(e));
    }
}
