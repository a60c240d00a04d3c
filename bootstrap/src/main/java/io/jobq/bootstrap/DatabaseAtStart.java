package io.jobq.bootstrap;

import io.jobq.application.port.StoreUnavailableException;
import java.time.Duration;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A role's first step on the database (migrate, or check the schema), waited out while the database cannot be
 * reached: a process started during a database restart, a failover or a moment of "too many clients" comes up
 * once the database is back, instead of exiting 1 and leaving its supervisor to restart it. Anything else (a
 * wrong password, an unmigrated schema) fails at once. Found by the chaos soak: a worker started during an
 * immediate-mode restart of PostgreSQL exited with "cannot read the schema version".
 */
final class DatabaseAtStart {
    private static final Logger log = LoggerFactory.getLogger(DatabaseAtStart.class);
    /** How long a starting process waits for an unreachable database before it gives up (exit 1). */
    static final Duration WAIT = Duration.ofSeconds(60);
    private static final Duration FIRST_PAUSE = Duration.ofMillis(500);
    private static final Duration MAX_PAUSE = Duration.ofSeconds(5);

    private DatabaseAtStart() {}

    /** Thrown when SIGTERM or SIGINT arrives while the database is waited for: the process stops, exit 0. */
    static final class Stopped extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Stopped() {
            super("stopped while waiting for the database", null, false, false);
        }
    }

    /** {@link #await(Supplier, String, Duration, Termination)} with {@link #WAIT}. */
    static <T> T await(Supplier<T> step, String database, Termination termination) throws InterruptedException {
        return await(step, database, WAIT, termination);
    }

    /**
     * Runs {@code step}, again after a pause (0.5 s, doubling to 5 s) for as long as it throws
     * {@link StoreUnavailableException} and {@code wait} has not passed.
     *
     * @param database how the log names the database (masked)
     * @param termination a stop requested meanwhile ends the wait at once; null where signals keep their default
     *     (the {@code migrate} role: SIGTERM ends the JVM)
     * @throws StoreUnavailableException the last failure, once {@code wait} has passed
     * @throws Stopped when a stop is requested while waiting
     */
    static <T> T await(Supplier<T> step, String database, Duration wait, Termination termination) throws InterruptedException {
        long deadline = System.nanoTime() + wait.toNanos();
        Duration pause = FIRST_PAUSE;
        while (true) {
            try {
                return step.get();
            } catch (StoreUnavailableException e) {
                long left = deadline - System.nanoTime();
                if (left <= 0) throw e;
                log.warn("database {} cannot be reached at start ({}); trying again in {} ms, for up to {} s more", database,
                        e.getMessage(), pause.toMillis(), Duration.ofNanos(left).toSeconds());
                Duration nap = Duration.ofMillis(Math.min(pause.toMillis(), Duration.ofNanos(left).toMillis() + 1));
                if (termination == null) Thread.sleep(nap);
                else if (termination.await(nap)) throw new Stopped();
                pause = pause.multipliedBy(2).compareTo(MAX_PAUSE) > 0 ? MAX_PAUSE : pause.multipliedBy(2);
            }
        }
    }
}
