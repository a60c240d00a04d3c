package io.jobq.application.fake;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/**
 * Polls a condition until it holds or a deadline passes, for tests of asynchronous code. Polling
 * a condition (rather than sleeping a fixed time) keeps tests fast when things work and bounded
 * when they do not.
 */
public final class Await {
    private static final Duration POLL = Duration.ofMillis(5);

    private Await() {}

    /**
     * Waits until {@code condition} holds.
     *
     * @throws AssertionError naming {@code what} if it does not hold within {@code timeout}
     */
    public static void until(Duration timeout, String what, BooleanSupplier condition) {
        if (!holdsWithin(timeout, condition)) throw new AssertionError("timed out after " + timeout + " waiting for: " + what);
    }

    /** Whether {@code condition} held at some poll within {@code timeout}. */
    public static boolean holdsWithin(Duration timeout, BooleanSupplier condition) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            if (condition.getAsBoolean()) return true;
            if (System.nanoTime() - deadline > 0) return false;
            try {
                Thread.sleep(POLL);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while waiting", e);
            }
        }
    }
}
