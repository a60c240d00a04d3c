package io.jobq.application.worker;

import io.jobq.application.port.JobQueueException;
import io.jobq.domain.lease.WorkerId;
import java.time.Duration;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where every role of a worker reports what went wrong, so that no throwable ends a worker thread and
 * each kind is handled the same way everywhere:
 * <ul>
 *   <li>an error the JVM cannot be trusted after ({@link FatalErrorPolicy#isFatal}) goes to the
 *       {@link FatalErrorPolicy} first, whose default halts the process;
 *   <li>a failed store call is logged at WARN and reported to {@link WorkerListener#storeError};
 *   <li>anything else unexpected (a bug, an Error from a listener) is logged at ERROR, and the caller carries on.
 * </ul>
 * Never throws.
 */
final class ErrorReporter {
    private static final Logger log = LoggerFactory.getLogger(Worker.class);

    private final WorkerId worker;
    private final WorkerListener listener;
    private final FatalErrorPolicy fatalErrors;

    ErrorReporter(WorkerId worker, WorkerListener listener, FatalErrorPolicy fatalErrors) {
        this.worker = Objects.requireNonNull(worker, "worker");
        this.listener = Objects.requireNonNull(listener, "listener");
        this.fatalErrors = Objects.requireNonNull(fatalErrors, "fatalErrors");
    }

    /**
     * Reports a throwable caught where the worker must go on: a fatal one to the policy, any other to the
     * log. Call it first thing in a catch block, with a constant {@code where}: when the heap is full, any
     * allocation before the policy halts the JVM (building a message, a Duration) throws again and ends the
     * thread instead.
     */
    void unexpected(String where, Throwable e) {
        if (FatalErrorPolicy.isFatal(e)) {
            fatal(where, e);
            return;
        }
        try {
            log.atError().addKeyValue("worker", worker).setCause(e)
                    .log("{} of worker {} failed unexpectedly; it carries on: {}", where, worker, e.toString());
        } catch (Throwable ignored) {
            // logging failed as well; nothing else could report it
        }
    }

    /** Offers {@code e} to the policy if it is fatal; allocates nothing before that. */
    void fatalIfSo(String where, Throwable e) {
        if (FatalErrorPolicy.isFatal(e)) fatal(where, e);
    }

    private void fatal(String where, Throwable e) {
        try {
            fatalErrors.onFatalError(where, e);
        } catch (Throwable ignored) {
            // a policy that throws is treated like one that returns
        }
    }

    /**
     * Logs and reports a failed store call. The caller offers {@code e} to {@link #fatalIfSo} first, before
     * it allocates anything (such as {@code retryIn}).
     *
     * @param retryIn when the caller tries again, or null when it gives up
     */
    void storeError(String operation, Throwable e, Duration retryIn) {
        log.atWarn().addKeyValue("worker", worker).addKeyValue("operation", operation)
                .log("store call {} failed{}: {}", operation,
                        retryIn == null ? "; giving up" : ", retrying in " + retryIn.toMillis() + " ms", e.toString());
        notify(() -> listener.storeError(operation, asRuntime(operation, e)));
    }

    /** A maintenance step failed; it is tried again next period. */
    void maintenanceError(String what, Throwable e) {
        fatalIfSo("maintenance", e);
        log.atWarn().addKeyValue("worker", worker).setCause(e)
                .log("maintenance failed to {}; retrying next period: {}", what, e.toString());
        notify(() -> listener.maintenanceError(asRuntime(what, e)));
    }

    /** Calls the listener; whatever it throws is reported, never propagated. */
    void notify(Runnable callback) {
        try {
            callback.run();
        } catch (Throwable e) {
            unexpected("listener callback", e);
        }
    }

    /**
     * Runs a background loop until it returns, which it does once {@code stop} is thrown. A throwable
     * escaping the loop is reported and the loop entered again after a pause, so that the thread never
     * dies while the worker runs.
     */
    void keepRunning(String name, Runnable loop, StopLatch stop, OutageBackoff pause) {
        while (true) {
            try {
                loop.run();
                return;
            } catch (Throwable e) {
                unexpected(name, e);
                if (stop.pause(pause.next())) return;
            }
        }
    }

    /** The listener's store-error callbacks take exceptions; an Error from the store comes wrapped. */
    private static RuntimeException asRuntime(String operation, Throwable e) {
        return e instanceof RuntimeException r ? r : new JobQueueException(operation + " threw " + e, e);
    }
}
