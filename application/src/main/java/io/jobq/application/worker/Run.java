package io.jobq.application.worker;

import io.jobq.domain.job.Job;
import io.jobq.domain.lease.FencingToken;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Optional;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One run of one job on this worker, from its claim until its outcome is recorded or discarded: the
 * state the roles share about it. {@link #phase} decides, by compare-and-set, which role may act on the
 * run next, so that exactly one of "the handler returned", "the timeout fired", "the grace ran out" and
 * "shutdown abandoned it" wins.
 */
final class Run {

    /** Where the run is; moves only forward, by compare-and-set. */
    enum Phase {
        /** The handler is running. */
        RUNNING,
        /** The task's timeout fired: the thread was interrupted; the outcome will be a timeout failure. */
        TIMED_OUT,
        /**
         * Timed out and still running after the grace: the timeout failure is recorded without waiting for
         * the handler, its slot given back; the handler's eventual return is discarded.
         */
        RELEASED,
        /** The handler returned; its outcome is being recorded (or discarded). */
        FINISHING,
        /** Shutdown's grace period ended first: the outcome is discarded. */
        ABANDONED
    }

    final Job job;
    final FencingToken token;
    final JobContext context;
    /** Why the run fails without calling its handler (its payload could not be parsed), if it does. */
    final Optional<Outcome.Failed> unrunnable;
    final Instant startedAt;
    /** {@link System#nanoTime()} when the run started: what a work-fairness queue charges is measured from here. */
    private final long startedNanos = System.nanoTime();
    final AtomicReference<Phase> phase = new AtomicReference<>(Phase.RUNNING);
    /** Whether the run's execution slot was given back (see {@link RunsInHand#handlerReturned}). */
    final AtomicBoolean slotReturned = new AtomicBoolean();
    /** Set by the lease keeper when a heartbeat found the store no longer holds this run. */
    volatile boolean leaseLost;
    /**
     * {@link System#nanoTime()} from which the store's lease may have lapsed unless a heartbeat extends
     * it: the send time of the claim or of the last applied heartbeat, plus the lease. Never later than
     * the store's own expiry, which counts from when the statement ran.
     */
    volatile long leaseDeadlineNanos;
    /** Why the run timed out, when it did (the context's reason may be an earlier cancellation). */
    volatile String timeoutReason;
    volatile Thread thread;
    /** The pending timeout (or, once timed out, the pending release), to cancel when the run ends. */
    volatile Future<?> timeout;

    Run(Job job, JobContext context, Optional<Outcome.Failed> unrunnable, Instant startedAt, long leaseDeadlineNanos) {
        this.job = job;
        this.token = job.fencingToken();
        this.context = context;
        this.unrunnable = unrunnable;
        this.startedAt = startedAt;
        this.leaseDeadlineNanos = leaseDeadlineNanos;
    }

    /**
     * Whether heartbeats should still extend this run's lease: until its outcome is recorded, also while a
     * released run's timeout failure is being written; not once shutdown abandoned it to its lease.
     */
    boolean wantsLease() {
        return phase.get() != Phase.ABANDONED && !leaseLost;
    }

    /** Time since the run started, by the worker's clock; never negative. */
    Duration elapsed(InstantSource clock) {
        Duration d = Duration.between(startedAt, clock.instant());
        return d.isNegative() ? Duration.ZERO : d;
    }

    /** Guards the move to FINISHING against interrupts: see {@link #interruptIfIn} and {@link #finish}. */
    private final Object interruptLock = new Object();

    /**
     * Interrupts the run's thread if the run is still in {@code phase}. Never once the job thread has moved
     * it to FINISHING ({@link #finish}, under the same lock): an interrupt sent then would hit the outcome's
     * store call, not the handler.
     */
    void interruptIfIn(Phase expected) {
        synchronized (interruptLock) {
            Thread t = thread;
            if (phase.get() == expected && t != null) t.interrupt();
        }
    }

    /**
     * The job thread, its handler returned: moves the run from RUNNING or TIMED_OUT to FINISHING.
     *
     * @return the phase it moved from, or the phase it found (RELEASED, ABANDONED) when it could not
     */
    Phase finish() {
        synchronized (interruptLock) {
            if (phase.compareAndSet(Phase.RUNNING, Phase.FINISHING)) return Phase.RUNNING;
            if (phase.compareAndSet(Phase.TIMED_OUT, Phase.FINISHING)) return Phase.TIMED_OUT;
            return phase.get();
        }
    }

    /** Time the run has taken so far, on the monotonic clock (recorded with its outcome); never negative. */
    Duration ranSoFar() {
        return Duration.ofNanos(Math.max(0, System.nanoTime() - startedNanos));
    }

    void cancelTimeout() {
        Future<?> t = timeout;
        if (t != null) t.cancel(false);
    }
}
