package io.jobq.bootstrap.robustness;

import java.time.Duration;
import java.util.concurrent.Callable;

/** Polling with generous bounds: the machine running the tests may be slow and busy. */
final class Await {
    private static final Duration PAUSE = Duration.ofMillis(50);

    private Await() {}

    /**
     * Calls {@code probe} every 50 ms until it returns non-null, and returns that.
     *
     * @throws AssertionError naming {@code what} (and the last exception, if any) after {@code timeout}
     */
    static <T> T until(Duration timeout, String what, Callable<T> probe) {
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
            if (System.nanoTime() > deadline) {
                AssertionError failure = new AssertionError("timed out after " + timeout + " waiting until " + what);
                if (last != null) failure.initCause(last);
                throw failure;
            }
            try {
                Thread.sleep(PAUSE);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
    }

    /** Like {@link #until} for a boolean condition. */
    static void condition(Duration timeout, String what, Callable<Boolean> probe) {
        until(timeout, what, () -> Boolean.TRUE.equals(probe.call()) ? Boolean.TRUE : null);
    }
}
