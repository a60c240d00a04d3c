package io.jobq.postgres;

import java.sql.PreparedStatement;
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
    /** The bound, local to the transaction; bench's FloorExperiment sends the same text. */
    static final String BOUND = "SELECT set_config('lock_timeout', ?, true)";

    private LockWait() {}

    /** Bounds every lock wait of {@code tx}'s transaction to {@link #MAX_MS} (SET LOCAL: it ends with the transaction). */
    static void limit(DSLContext tx) {
        limit(tx, MAX_MS);
    }

    /**
     * As {@link #limit(DSLContext)}, to {@code ms} (at least 1). Sent on the transaction's connection through
     * JDBC, not as a jOOQ query: the claim loop sends it before every carried claim, and jOOQ's parsing of the
     * template and reading of the result's metadata took over a third of the claim loop's CPU in a profile of
     * 16 single-slot workers (issue 14), for a statement whose answer nobody reads.
     */
    static void limit(DSLContext tx, int ms) {
        if (ms < 1) throw new IllegalArgumentException("a lock wait bound must be at least 1 ms, was " + ms);
        tx.connection(c -> {
            try (PreparedStatement bound = c.prepareStatement(BOUND)) {
                bound.setString(1, ms + "ms");
                bound.executeQuery().close();
            }
        });
    }

    /** Whether {@code e} is a lock wait that ran past {@link #limit}. */
    static boolean ranOut(Throwable e) {
        return LOCK_NOT_AVAILABLE.equals(StoreErrors.sqlState(e));
    }
}
