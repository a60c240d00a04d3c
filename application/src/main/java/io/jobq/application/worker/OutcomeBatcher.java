package io.jobq.application.worker;

import io.jobq.application.port.FencedWrite;
import io.jobq.application.port.JobStore;
import io.jobq.application.port.OutcomeWrite;
import io.jobq.domain.job.JobId;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Group commit of run outcomes, carried by the claim loop: each run's thread hands its {@link OutcomeWrite}
 * over and waits; the {@link ClaimLoop}, which the hand-over wakes, {@link #take takes} every outcome waiting
 * and writes them in the same statement as its next claim ({@link JobStore#recordOutcomesThenClaim}), or
 * alone ({@link JobStore#recordOutcomes}) when it has no room to claim. A run's slot is given back only after
 * its outcome is handed over, so the claim that refills the slot carries it: a busy worker pays one commit
 * per batch of jobs, for their outcomes and the next claim together, where separate writes cost two.
 *
 * <p>A run is reported done only after the commit that made it so: each gets the store's own answer for its
 * write, or what the statement threw (then its {@link OutcomeRecorder} may try again; the fences make that
 * safe, and nothing is lost meanwhile, since the runs' leases stand until they lapse).
 *
 * <p>An outcome is written on its run's own thread instead ({@link JobStore#recordOutcomes}, one statement)
 * when the claim loop is not claiming (before start, after {@link #stopRiding}, at shutdown), and when the claim
 * loop has not taken it within {@code waitForClaimLoop} (it is stuck in a slow store call or an outage's
 * back-off): a watchdog on the worker's timer hands such outcomes back to their runs, so none waits much longer
 * than that (at most half as long again) for the claim loop to take it. Once taken, it waits for the claim
 * loop's store call, as long as that call takes (bounded by the connection's timeouts).
 *
 * <p>Where the store's claims cannot carry outcomes ({@link JobStore#claimsCarryOutcomes} false), an
 * {@link OutcomeWriter} takes them instead of the claim loop, and writes them alone; what is said here of the
 * claim loop holds for it.
 *
 * <p>Why a watchdog and not a timed wait per run: a virtual thread's timed wait registers with, and then
 * cancels from, the JDK's delay scheduler and wakes its thread; at thousands of jobs a second a profile of 16
 * workers put that at a tenth of the worker JVM's CPU (issue 14). Runs wait untimed; the watchdog is one
 * periodic task per worker.
 */
final class OutcomeBatcher {
    /** One outcome waiting for the claim loop; whoever takes it must answer it ({@link #answer}, {@link #fail}). */
    static final class Pending {
        private final OutcomeWrite write;
        /** The store's answer; completed with {@code null} when handed back unwritten, for its run to write. */
        private final CompletableFuture<FencedWrite> answer = new CompletableFuture<>();
        /** When it was queued, by {@link System#nanoTime()}: the watchdog hands it back once it waited too long. */
        private final long queuedNanos = System.nanoTime();
        /** Set once its run has given its slot back: the room that frees is there for a claim now. */
        private volatile boolean handedOver;

        private Pending(OutcomeWrite write) {
            this.write = write;
        }

        OutcomeWrite write() {
            return write;
        }
    }

    private final JobStore store;
    private final int maxBatch;
    private final Duration waitForClaimLoop;
    private final WakeSignal claimLoop;
    private final ConcurrentLinkedQueue<Pending> queue = new ConcurrentLinkedQueue<>();
    private volatile boolean riding;
    private ScheduledFuture<?> watchdog;

    /**
     * @param maxBatch most outcomes in one statement
     * @param waitForClaimLoop how long an outcome waits for the claim loop to take it before its run writes it
     * @param claimLoop signalled whenever an outcome is handed over: the claim loop's signal, or the
     *     {@link OutcomeWriter}'s where claims cannot carry outcomes
     */
    OutcomeBatcher(JobStore store, int maxBatch, Duration waitForClaimLoop, WakeSignal claimLoop) {
        this.store = store;
        this.maxBatch = maxBatch;
        this.waitForClaimLoop = waitForClaimLoop;
        this.claimLoop = claimLoop;
    }

    /**
     * The claim loop runs: outcomes wait for it from now on, and {@code timer} runs the watchdog that hands back
     * those it leaves waiting longer than {@code waitForClaimLoop}, every half of that.
     */
    synchronized void startRiding(ScheduledExecutorService timer) {
        if (watchdog != null) throw new IllegalStateException("already riding");
        long every = Math.max(1, waitForClaimLoop.toNanos() / 2);
        watchdog = timer.scheduleWithFixedDelay(this::handBackOverdue, every, every, TimeUnit.NANOSECONDS);
        riding = true;
    }

    /**
     * The claim loop stops (shutdown): outcomes from now on are written by their runs, and those it has not
     * taken are handed back to their runs at once.
     */
    synchronized void stopRiding() {
        riding = false;
        if (watchdog != null) watchdog.cancel(false);
        for (Pending p : queue) handBack(p);
        claimLoop.signal();
    }

    /** The watchdog: hands back every outcome the claim loop left waiting longer than {@code waitForClaimLoop}. */
    void handBackOverdue() {
        long now = System.nanoTime();
        // The whole queue (at most about a worker's slots): two runs' stamps and adds may interleave, so it is
        // not strictly in queuedNanos order.
        for (Pending p : queue) {
            if (now - p.queuedNanos >= waitForClaimLoop.toNanos()) handBack(p);
        }
    }

    /** Hands {@code p} back to its run, unless the claim loop took it first ({@code remove} decides the race). */
    private void handBack(Pending p) {
        if (queue.remove(p)) p.answer.complete(null);
    }

    /**
     * Writes {@code write} and returns the store's answer for it; calls {@code handedOver} once the claim loop
     * can take it (or, writing it here, before the write), so that the slot it frees is refilled by a claim
     * carrying it. Waits for the answer even when interrupted (a statement takes milliseconds, and a run must
     * not report as lost an outcome that then commits); the interrupt is kept for the caller.
     *
     * @throws RuntimeException or Error: what the statement carrying it threw (the write may be tried again)
     */
    FencedWrite write(OutcomeWrite write, Runnable handedOver) {
        if (!riding) {
            handedOver.run();
            return direct(write);
        }
        Pending p = new Pending(write);
        queue.add(p);
        // stopRiding() may have emptied the queue between the check above and the add: then nobody else will
        // hand this one back. Either it sees p queued, or this sees riding off; remove() decides who hands back.
        if (!riding) handBack(p);
        handedOver.run();
        p.handedOver = true;
        // After the hand-over frees the slot: a claim loop woken before would find no room for a claim.
        claimLoop.signal();
        FencedWrite answer = await(p);
        return answer != null ? answer : direct(write);
    }

    /** The answer of {@code p}, {@code null} if handed back; waits untimed, through interrupts (kept for the caller). */
    private static FencedWrite await(Pending p) {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return p.answer.get();
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (ExecutionException e) {
                    Throwable cause = e.getCause();
                    if (cause instanceof RuntimeException r) throw r;
                    if (cause instanceof Error err) throw err;
                    throw new IllegalStateException(cause);
                }
            }
        } finally {
            if (interrupted) Thread.currentThread().interrupt();
        }
    }

    private FencedWrite direct(OutcomeWrite write) {
        return store.recordOutcomes(List.of(write)).getFirst();
    }

    /**
     * Writes {@code taken} in one statement of their own ({@link JobStore#recordOutcomes}) and answers them; if
     * that throws, fails them with {@code earlier} (what a call that carried them before threw) or else with what
     * it threw, and hands the throwable to {@code errors} in case the JVM cannot be trusted after it. Their runs
     * report a failure and try again (the fences make that safe); no back-off here.
     */
    void writeAlone(List<Pending> taken, Throwable earlier, ErrorReporter errors) {
        if (taken.isEmpty()) return;
        try {
            answer(taken, store.recordOutcomes(writes(taken)));
        } catch (Throwable e) {
            fail(taken, earlier != null ? earlier : e);
            errors.fatalIfSo("store call", e);
        }
    }

    /**
     * Takes the outcomes waiting ({@link #take}, or with {@code onlyHandedOver} {@link #takeHandedOver}) and
     * writes them alone ({@link #writeAlone}); whatever happens, each taken is answered or failed.
     */
    void writeWaitingAlone(boolean onlyHandedOver, ErrorReporter errors) {
        List<Pending> taken = onlyHandedOver ? takeHandedOver() : take();
        try {
            writeAlone(taken, null, errors);
        } finally {
            failUnanswered(taken);
        }
    }

    /**
     * For the claim loop (or the writer): takes up to {@code maxBatch} waiting outcomes, of distinct jobs (a second attempt of
     * a job in this worker waits for the next statement), in the order they were handed over. The caller must
     * answer every one, whatever happens.
     */
    List<Pending> take() {
        return take(false);
    }

    /**
     * As {@link #take()}, but only outcomes whose runs have given their slots back: for a claim loop with no
     * room even so, which writes them alone.
     */
    List<Pending> takeHandedOver() {
        return take(true);
    }

    private List<Pending> take(boolean onlyHandedOver) {
        List<Pending> taken = new ArrayList<>();
        try {
            Set<JobId> jobs = new HashSet<>();
            for (Iterator<Pending> it = queue.iterator(); it.hasNext() && taken.size() < maxBatch; ) {
                Pending p = it.next();
                if (onlyHandedOver && !p.handedOver) continue;
                // remove() decides the race with a run giving up on the claim loop: only one side gets it
                if (!jobs.contains(p.write.token().job()) && queue.remove(p)) {
                    jobs.add(p.write.token().job());
                    taken.add(p);
                }
            }
            return taken;
        } catch (Throwable e) {
            fail(taken, e); // taken off the queue: nobody else would ever answer them
            throw e;
        }
    }

    /** Whether an outcome is waiting for the claim loop. */
    boolean hasWaiting() {
        return !queue.isEmpty();
    }

    /** Whether an outcome whose run gave its slot back is waiting for the claim loop. */
    boolean hasHandedOver() {
        for (Pending p : queue) if (p.handedOver) return true;
        return false;
    }

    /** How many outcomes are waiting for the claim loop (a count for tests; walks the queue). */
    int waiting() {
        return queue.size();
    }

    static List<OutcomeWrite> writes(List<Pending> taken) {
        return taken.stream().map(Pending::write).toList();
    }

    /**
     * Hands each of {@code taken} its answer; fails them all if the store answered another number of them, or
     * null for one (null tells a run its outcome was handed back unwritten).
     */
    static void answer(List<Pending> taken, List<FencedWrite> answers) {
        if (answers.size() != taken.size() || answers.stream().anyMatch(Objects::isNull)) {
            fail(taken, new IllegalStateException("the store answered " + answers.stream().filter(Objects::nonNull).count()
                    + " of " + taken.size() + " outcomes"));
            return;
        }
        for (int i = 0; i < taken.size(); i++) taken.get(i).answer.complete(answers.get(i));
    }

    /** Fails every one of {@code taken} not answered yet with {@code e}. */
    static void fail(List<Pending> taken, Throwable e) {
        for (Pending p : taken) p.answer.completeExceptionally(e);
    }

    /**
     * The taker's last guard (the claim loop's or the writer's), after every statement that carried {@code taken}: fails any of them still
     * unanswered (whatever was thrown where, even an Error), so no run waits for an answer that never comes.
     * The exception is made only then: on the hot path all are answered, and a stack trace per claim showed
     * in profiles.
     */
    static void failUnanswered(List<Pending> taken) {
        for (Pending p : taken) {
            if (!p.answer.isDone()) {
                fail(taken, new IllegalStateException("the statement carrying this outcome did not answer it"));
                return;
            }
        }
    }
}
