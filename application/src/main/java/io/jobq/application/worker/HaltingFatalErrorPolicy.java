package io.jobq.application.worker;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** {@link FatalErrorPolicy#HALT}: log if possible, then halt the JVM at once. */
final class HaltingFatalErrorPolicy implements FatalErrorPolicy {
    private static final Logger log = LoggerFactory.getLogger(FatalErrorPolicy.class);

    @Override
    public void onFatalError(String where, Throwable error) {
        try {
            log.error("fatal error in {} (thread {}): this JVM can no longer be trusted to work; halting with exit"
                    + " code 3 so that its supervisor starts a new one (jobs in hand are left to their leases)",
                    where, Thread.currentThread().getName(), error);
        } catch (Throwable ignored) {
            // Logging needs memory too. Whatever it could not say, the exit code says.
        } finally {
            Runtime.getRuntime().halt(HALT_EXIT_CODE);
        }
    }
}
