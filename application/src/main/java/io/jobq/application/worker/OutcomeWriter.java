package io.jobq.application.worker;

import io.jobq.application.port.JobStore;
import java.time.Duration;

/**
 * Takes the outcomes runs hand to the {@link OutcomeBatcher} and writes them, when the store's claims cannot
 * carry them ({@link JobStore#claimsCarryOutcomes} false: PostgreSQL under {@code FOR UPDATE}, whose claim
 * may wait on a queued row's lock and must not hold the ending runs' row locks meanwhile). One platform
 * thread per worker, beside the claim loop: it takes every outcome waiting (up to the batcher's bound) and
 * writes them in one statement ({@link JobStore#recordOutcomes}), one commit for all, and answers each run.
 * Claims and outcome writes go on side by side, each on its own connection.
 *
 * <p>Why not each run writing its own, as until 2026-12-03: on 2 cores the worker JVM's CPU bounded the
 * blocking row of the bench, and a run's write on its virtual thread costs a park, a poller registration and
 * a wake-up per round trip (async-profiler: about a third of the JVM's CPU at 8 blocking single-slot
 * workers). With this thread, alternated invocations of {@code throughput --workers 4,8} (blocking row,
 * jobq alone) read 995–1,286 jobs/s at 8 workers against 732–891 jobs/s (docs/benchmarks.md has the
 * pairs beside the floor).
 *
 * <p>A write that throws fails the outcomes it carried: their runs report it and try again (the fences make
 * that safe; see {@link OutcomeRecorder}); nothing is retried here, and nothing is lost, since the runs' leases
 * stand until they lapse. The batcher's watchdog hands back what this thread leaves waiting too long (stuck in
 * a slow call) to the runs, which then write their own, as it does for the claim loop (see
 * {@link Worker#waitForClaimLoop}).
 */
final class OutcomeWriter {
    /** The fallback wait for a hand-over's signal; every hand-over signals, so this only bounds a missed one. */
    private static final Duration IDLE_CHECK = Duration.ofMillis(100);

    private final OutcomeBatcher outcomes;
    private final WakeSignal handedOver;
    private final ErrorReporter errors;
    private volatile boolean stopped;

    /** @param handedOver the signal {@code outcomes} sends on every hand-over */
    OutcomeWriter(OutcomeBatcher outcomes, WakeSignal handedOver, ErrorReporter errors) {
        this.outcomes = outcomes;
        this.handedOver = handedOver;
        this.errors = errors;
    }

    /** Writes what is handed over until {@link #stop}, and then whatever is still waiting. */
    void loop() {
        while (true) {
            if (!outcomes.hasWaiting()) {
                if (stopped) return;
                // Nothing of the worker interrupts this thread; should something, the flag would make every wait
                // return at once (a busy loop) and fail the next write: only stop() ends this loop.
                Thread.interrupted();
                handedOver.await(IDLE_CHECK);
                continue;
            }
            outcomes.writeWaitingAlone(false, errors);
        }
    }

    /**
     * Ends {@link #loop} once nothing waits: call it after {@link OutcomeBatcher#stopRiding}, which hands what
     * is queued back to the runs, so only a write under way is finished.
     */
    void stop() {
        stopped = true;
        handedOver.signal();
    }
}
