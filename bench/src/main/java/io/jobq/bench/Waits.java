package io.jobq.bench;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

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

    /**
     * The end of a timed drain: waits (1 ms steps, in this JVM only) until {@code ran} reaches
     * {@code jobs}, then asks the database every 2 ms until {@code doneInDatabase} holds, and returns
     * {@link System#nanoTime()} at that moment. So every system's drain ends when its last outcome is
     * committed, whether or not its own callbacks fire before the commit.
     *
     * @throws BenchException if that takes longer than {@code timeout}
     */
    static long drained(LongSupplier ran, long jobs, BooleanSupplier doneInDatabase, Duration timeout, String what) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (ran.getAsLong() < jobs) {
            if (System.nanoTime() > deadline) {
                throw new BenchException(what + ": " + ran.getAsLong() + " of " + jobs + " jobs ran within " + timeout.toSeconds() + " s");
            }
            sleep(Duration.ofMillis(1));
        }
        until(doneInDatabase, Duration.ofMillis(2), Duration.ofNanos(Math.max(0, deadline - System.nanoTime())), what + " to commit its last outcome");
        return System.nanoTime();
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
