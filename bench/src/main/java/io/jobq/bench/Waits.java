package io.jobq.bench;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Waiting for a condition the database or the workers will make true, with a deadline. */
final class Waits {
    private Waits() {}

    /**
     * Checks {@code condition} every {@code every} until it holds.
     *
     * @throws BenchException naming {@code what} if it does not hold within {@code timeout}
     */
    static void until(BooleanSupplier condition, Duration every, Duration timeout, String what) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) throw new BenchException("timed out after " + timeout.toSeconds() + " s waiting for " + what);
            sleep(every);
        }
    }

    static void sleep(Duration d) {
        try {
            Thread.sleep(d);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BenchException("interrupted");
        }
    }

    /** Sleeps until {@code System.nanoTime()} reaches {@code nanos}; returns at once if it already has. */
    static void sleepUntil(long nanos) {
        long left = nanos - System.nanoTime();
        if (left > 0) sleep(Duration.ofNanos(left));
    }
}
