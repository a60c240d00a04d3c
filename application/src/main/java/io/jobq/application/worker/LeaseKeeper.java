package io.jobq.application.worker;

import io.jobq.application.port.JobStore;
import io.jobq.domain.lease.FencingToken;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the leases of the runs in hand alive, and tells the other roles when they may have lapsed.
 *
 * <ul>
 *   <li><b>Heartbeat</b> (its own thread): every {@link WorkerSettings#effectiveHeartbeatInterval()}
 *       (lease / 3 by default, so two heartbeats can fail before a lease lapses), extends the leases of
 *       ALL runs in hand in ONE {@link JobStore#heartbeat} call. After a failed call it retries sooner
 *       (backing off from 100 ms, never later than the period), so a short outage costs no lease. A run
 *       whose lease was lost (reaped or re-claimed) has its {@link JobContext} cancelled and its outcome
 *       will be discarded, never recorded.
 *   <li><b>Jeopardy</b> (on the worker's timer, not in the heartbeat thread, which a hung call blocks):
 *       flags every run whose lease may have lapsed because no heartbeat reached the store within a lease
 *       ({@link JobContext#isLeaseInJeopardy()}). Once the store is back, any worker's maintenance may reap
 *       such a lease and run the job again, so a handler about to perform a side effect that must not
 *       happen twice can check the flag and stop (Chubby's "jeopardy": Burrows, 2006). Not a cancellation:
 *       handlers that treat cancellation as failure would turn every database restart longer than a lease
 *       into a retry, where case R10 expects the runs to go on. The fence decides whether the outcome counts.
 *   <li><b>Own leases first</b>: {@link #ownLeasesCurrent()} tells the maintainer not to reap while a run
 *       of this worker may have lapsed unheard (after an outage): its next heartbeat, not its own reaper,
 *       should find out whether it still holds them.
 * </ul>
 */
final class LeaseKeeper {
    private static final Logger log = LoggerFactory.getLogger(LeaseKeeper.class);

    private final JobStore store;
    private final Runnable seen;
    private final WorkerSettings settings;
    private final RunsInHand runs;
    private final ClaimedAhead ahead;
    private final WorkerListener listener;
    private final ErrorReporter errors;
    private final StopLatch stop;
    private final WakeSignal beatNow = new WakeSignal();

    /**
     * @param seen called once per heartbeat period, runs in hand or not: the worker announces it is alive
     *     ({@link JobStore#workerAlive}); it must not throw
     */
    LeaseKeeper(JobStore store, WorkerSettings settings, RunsInHand runs, ClaimedAhead ahead, WorkerListener listener,
            ErrorReporter errors, StopLatch stop, Runnable seen) {
        this.ahead = ahead;
        this.seen = seen;
        this.store = store;
        this.settings = settings;
        this.runs = runs;
        this.listener = listener;
        this.errors = errors;
        this.stop = stop;
    }

    /** The heartbeat loop; returns once {@code stop} is thrown. */
    void heartbeatLoop() {
        Duration every = settings.effectiveHeartbeatInterval();
        OutageBackoff outage = OutageBackoff.of(settings);
        Duration wait = every;
        while (!awaitBeat(wait)) {
            wait = every;
            // Claimed ahead, waiting for a slot: leased all the same. Read before the runs, so that a job moving
            // from there to the runs meanwhile is in one list or both (a set: both is one token).
            Set<FencingToken> unique = new LinkedHashSet<>(ahead.tokens());
            for (Run run : runs.all()) {
                if (run.wantsLease()) unique.add(run.token);
            }
            List<FencingToken> tokens = List.copyOf(unique);
            seen.run(); // the worker is alive, whether or not it holds runs (GET /workers)
            if (tokens.isEmpty()) continue;
            long sentNanos = System.nanoTime();
            Set<FencingToken> lost;
            try {
                lost = store.heartbeat(tokens, settings.lease());
                outage.reset();
            } catch (Throwable e) {
                errors.fatalIfSo("store call", e);
                Duration retry = outage.next();
                wait = retry.compareTo(every) < 0 ? retry : every;
                errors.storeError("heartbeat", e, wait);
                continue;
            }
            applied(tokens, lost, sentNanos);
            askAboutCancels(tokens, lost);
        }
    }

    /**
     * Tells the handlers of runs whose job someone cancelled: the context's flag, and an interrupt. One
     * more statement per heartbeat; a failure is only logged (the next heartbeat asks again).
     */
    private void askAboutCancels(List<FencingToken> tokens, Set<FencingToken> lost) {
        List<FencingToken> held = tokens.stream().filter(t -> !lost.contains(t)).toList();
        if (held.isEmpty()) return;
        Set<FencingToken> cancelled;
        try {
            cancelled = store.cancelRequested(held);
        } catch (Throwable e) {
            errors.fatalIfSo("store call", e);
            errors.storeError("asking about cancelled jobs", e, settings.effectiveHeartbeatInterval());
            return;
        }
        giveBackCancelled(cancelled);
        for (FencingToken token : cancelled) {
            Run run = runs.get(token);
            if (run == null || run.phase.get() != Run.Phase.RUNNING) continue;
            if (run.context.cancel("cancelled: job " + token.job() + " was cancelled while it ran")) {
                run.interruptIfIn(Run.Phase.RUNNING);
                JobLogFields.of(log.atInfo(), run.job).log("job {} attempt {} was cancelled; its handler is told and"
                        + " interrupted", run.job.id(), run.job.attempts());
            }
        }
    }

    /**
     * Jobs cancelled while they waited for a slot never start: they are given back to the store, which ends
     * them cancelled. Should that fail, they are left to their leases (the reaper cancels them too).
     */
    private void giveBackCancelled(Set<FencingToken> cancelled) {
        List<FencingToken> unstarted = ahead.drop(cancelled);
        if (unstarted.isEmpty()) return;
        log.atInfo().log("{} job(s) waiting for a slot were cancelled; they are not started: {}", unstarted.size(), unstarted);
        try {
            store.release(unstarted);
        } catch (Throwable e) {
            // Left to their leases (the reaper ends them cancelled); never adopted as lost claims meanwhile.
            unstarted.forEach(runs::letGo);
            errors.fatalIfSo("store call", e);
            errors.storeError("giving back cancelled jobs", e, settings.lease());
        }
    }

    /** Waits for the next beat: the period, or sooner when {@link #beatSoon()} was called; true once stopped. */
    private boolean awaitBeat(Duration wait) {
        if (stop.isStopped()) return true;
        beatNow.await(wait);
        return stop.isStopped();
    }

    /** Asks for a heartbeat now rather than at the end of the period (e.g. the maintainer waits on one). */
    void beatSoon() {
        beatNow.signal();
    }

    private void applied(List<FencingToken> tokens, Set<FencingToken> lost, long sentNanos) {
        long deadline = sentNanos + leaseNanos();
        // The waiting jobs first, then the runs: a job that starts in between carries the new deadline over.
        ahead.extended(tokens.stream().filter(t -> !lost.contains(t)).toList(), deadline);
        for (FencingToken token : tokens) {
            Run run = runs.get(token);
            if (run != null && !lost.contains(token)) run.leaseDeadlineNanos = deadline;
        }
        for (FencingToken token : ahead.drop(lost)) {
            log.atWarn().log("run {} lost its lease while it waited for a slot; it is not started", token);
            errors.notify(() -> listener.discarded(token, DiscardReason.LEASE_LOST));
        }
        for (FencingToken token : lost) {
            Run run = runs.get(token);
            Run.Phase phase = run == null ? null : run.phase.get();
            if (phase == Run.Phase.RUNNING || phase == Run.Phase.TIMED_OUT) {
                run.leaseLost = true;
                run.context.cancel("lease lost: the store no longer holds run " + token + " (reaped or re-claimed)");
                JobLogFields.of(log.atWarn(), run.job).log("job {} attempt {} lost its lease; the run is cancelled and its"
                        + " outcome will be discarded", run.job.id(), run.job.attempts());
            }
        }
        Set<FencingToken> lostCopy = Set.copyOf(lost);
        int extended = tokens.size() - lost.size();
        errors.notify(() -> listener.heartbeat(extended, lostCopy));
    }

    /** The lease as the store applies it: whole milliseconds, so a deadline from it is never later than the store's. */
    long leaseNanos() {
        return TimeUnit.MILLISECONDS.toNanos(settings.lease().toMillis());
    }

    /** Every heartbeat interval, on the worker's timer: flags the runs whose lease may have lapsed (see the class). */
    void flagLeasesInJeopardy() {
        long now = System.nanoTime();
        for (Run run : runs.all()) {
            if (run.context.isLeaseInJeopardy() || run.leaseLost || now - run.leaseDeadlineNanos < 0) continue;
            if (run.phase.get() != Run.Phase.RUNNING) continue;
            String reason = "lease in jeopardy: no heartbeat reached the store within the " + settings.lease().toMillis()
                    + " ms lease, so another worker may take run " + run.token + " over once the store is back";
            run.context.markLeaseInJeopardy(reason);
            JobLogFields.of(log.atWarn(), run.job).log("job {} attempt {}: {}; the run goes on, and the store's fence"
                    + " decides whether its outcome counts", run.job.id(), run.job.attempts(), reason);
        }
    }

    /**
     * Whether every lease this worker still wants is known to be alive: no run in hand has gone a whole lease
     * without a heartbeat reaching the store. False after an outage until the next heartbeat gets through.
     */
    boolean ownLeasesCurrent() {
        long now = System.nanoTime();
        for (Run run : runs.all()) {
            if (run.wantsLease() && now - run.leaseDeadlineNanos >= 0) return false;
        }
        return !ahead.anyLeaseLapsed(now);
    }
}
