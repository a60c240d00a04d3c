package io.jobq.bootstrap;

import io.jobq.application.worker.FatalErrorPolicy;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The launcher's default uncaught-exception handler, for threads jobq does not own (a library's, the
 * JVM's) and for anything escaping {@code main}: a fatal error ({@link FatalErrorPolicy#isFatal})
 * goes to the policy, which halts the process with exit status 3 so its supervisor restarts it;
 * anything else is logged, so no thread dies without a word. The worker's own threads never get
 * here: they report to the same policy themselves and go on.
 */
final class UncaughtErrors implements Thread.UncaughtExceptionHandler {
    private static final Logger log = LoggerFactory.getLogger(UncaughtErrors.class);

    private final FatalErrorPolicy policy;

    UncaughtErrors(FatalErrorPolicy policy) {
        this.policy = Objects.requireNonNull(policy, "policy");
    }

    /** Makes a handler with {@link FatalErrorPolicy#HALT} the default for every thread of this JVM. */
    static UncaughtErrors install() {
        UncaughtErrors handler = new UncaughtErrors(FatalErrorPolicy.HALT);
        Thread.setDefaultUncaughtExceptionHandler(handler);
        return handler;
    }

    @Override
    public void uncaughtException(Thread thread, Throwable error) {
        if (FatalErrorPolicy.isFatal(error)) {
            // A constant: building a message first could throw again on a full heap (the JVM then only
            // prints that the handler itself threw, and the thread dies with the process still up).
            policy.onFatalError("a thread's uncaught throwable", error);
            return;
        }
        try {
            log.error("thread {} ended with an uncaught {}", thread.getName(), error.toString(), error);
        } catch (Throwable ignored) {
            // nothing else could report it
        }
    }
}
