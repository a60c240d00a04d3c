package io.jobq.bootstrap;

import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns SIGTERM and SIGINT into a graceful stop with exit code 0. A plain JVM shutdown hook would run
 * on SIGTERM too, but the JVM then exits with 143 and may start tearing down logging while workers
 * still drain; handling the signal lets the main thread drain first and exit 0 itself.
 */
final class Termination {
    private static final Logger log = LoggerFactory.getLogger(Termination.class);

    private final CountDownLatch requested = new CountDownLatch(1);

    /** Installs the handlers; falls back to a shutdown hook where signals cannot be handled. */
    static Termination install() {
        Termination t = new Termination();
        try {
            for (String name : new String[] {"TERM", "INT"}) {
                sun.misc.Signal.handle(new sun.misc.Signal(name), sig -> {
                    log.info("received SIG{}, shutting down gracefully", sig.getName());
                    t.requested.countDown();
                });
            }
        } catch (IllegalArgumentException | UnsupportedOperationException e) {
            log.warn("cannot handle signals ({}); relying on a shutdown hook", e.getMessage());
        }
        return t;
    }

    /** Blocks until a stop is requested. */
    void await() throws InterruptedException {
        requested.await();
    }

    /** Waits up to {@code timeout} for a stop to be requested; true if one was. */
    boolean await(java.time.Duration timeout) throws InterruptedException {
        return requested.await(timeout.toNanos(), java.util.concurrent.TimeUnit.NANOSECONDS);
    }

    /** Requests a stop from inside the process (tests, a fatal error). */
    void request() {
        requested.countDown();
    }
}
