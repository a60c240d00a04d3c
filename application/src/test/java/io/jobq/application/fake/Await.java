package io.jobq.application.fake;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.function.BooleanSupplier;

/**
 * Polls a condition until it holds or a deadline passes, for tests of asynchronous code: the one
 * waiting helper of every module's tests. Polling (rather than sleeping a fixed time) keeps tests
 * fast when things work and bounded when they do not.
 *
 * <p>Two cadences: an in-process condition ({@link #until}) is cheap and polled every 5 ms; a probe
 * of another process or server ({@link #value}, {@link #condition}) may fail while that side is still
 * starting, so its exceptions count as "not yet", and it is polled every 50 ms so that waiting does
 * not load a slow, busy machine.
 */
public final class Await {
    private static final Duration POLL = Duration.ofMillis(5);
    private static final Duration PROBE_PAUSE = Duration.ofMillis(50);

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
            pause(POLL);
        }
    }

    /**
     * Calls {@code probe} every 50 ms until it returns non-null, and returns that. An exception from
     * the probe means "not yet"; an {@link AssertionError} ends the wait at once.
     *
     * @throws AssertionError naming {@code what} (caused by the probe's last exception, if any) after {@code timeout}
     */
    public static <T> T value(Duration timeout, String what, Callable<T> probe) {
        long deadline = System.nanoTime() + timeout.toNanos();
        Throwable last = null;
        while (true) {
            try {
                T value = probe.call();
                if (value != null) return value;
                last = null;
            } catch (AssertionError e) {
                throw e;
            } catch (Exception e) {
                last = e;
            }
            if (System.nanoTime() - deadline > 0) {
                AssertionError failure = new AssertionError("timed out after " + timeout + " waiting until " + what);
                if (last != null) failure.initCause(last);
                throw failure;
            }
            pause(PROBE_PAUSE);
        }
    }

    /** Like {@link #value}, for a probe that answers true once the condition holds. */
    public static void condition(Duration timeout, String what, Callable<Boolean> probe) {
        value(timeout, what, () -> Boolean.TRUE.equals(probe.call()) ? Boolean.TRUE : null);
    }

    private static void pause(Duration pause) {
        try {
            Thread.sleep(pause);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while waiting", e);
        }
    }
}
