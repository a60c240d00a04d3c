package io.jobq.application.worker;

import io.jobq.application.port.ClaimRequest;
import io.jobq.application.port.JobStore;
import io.jobq.application.port.OutcomesThenClaim;
import io.jobq.domain.job.Job;
import io.jobq.domain.lease.FencingToken;
import io.jobq.domain.lease.WorkerId;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The producer: whenever there is room, claims {@code min(room, claimBatchSize)} jobs in ONE store call
 * (while other handlers run, it first waits a moment for more room, see {@link #fill}) and hands them to
 * {@link ClaimedAhead}, which starts them as slots free. The same call writes the outcomes runs have handed
 * to the {@link OutcomeBatcher} ({@link JobStore#recordOutcomesThenClaim}: one commit), since
 * a run gives its slot back only once its outcome waits here; with no outcome waiting it is a plain
 * {@link JobStore#claim}, and with no room it writes the outcomes alone. (Where the store's claims cannot
 * carry outcomes, {@link JobStore#claimsCarryOutcomes}, every claim is plain and the worker's
 * {@link OutcomeWriter} writes the outcomes beside them.) The room is the
 * free slots plus, with {@link WorkerSettings#prefetch()}, the jobs that may wait for one. When the queues are drained
 * it sleeps until the first of: a wake-up from the {@link io.jobq.application.port.WakeupChannel}, a slot
 * freeing, a maintenance pass promoting jobs, or the fallback poll ({@link WorkerSettings#pollInterval()}).
 * A failed claim is retried after an {@link OutageBackoff}; nothing ends the loop but shutdown.
 *
 * <h2>A claim whose answer was lost</h2>
 * A claim commits before its rows reach the worker. When the connection fails in between (a database
 * restart, a network cut), the jobs are running and leased to this worker, which does not know it (the
 * outcomes the call carried are failed to their runs, which try them again; see {@link OutcomeRecorder}): left
 * alone, their leases would lapse and each would burn an attempt it never ran. So after any failed claim,
 * before claiming again, the loop asks the store for the runs leased to this worker
 * ({@link JobStore#runsLeasedTo}) and adopts those it never started: each is confirmed by a heartbeat
 * (a run already reaped or re-claimed is not started) and then run as if just claimed.
 * Not adopted: runs in hand, runs this worker let go with their lease still its own (an outcome it could
 * not write), and runs leased to this worker id when the loop started, which an earlier process with the
 * same {@code --worker-id} left behind (their attempts may have run; the lease decides, as after any crash).
 */
final class ClaimLoop {
    private static final Logger log = LoggerFactory.getLogger(ClaimLoop.class);

    /** How long the loop waits, with no room, for the slot of an outcome being handed over (its signal ends the wait). */
    private static final Duration ROOM_FOR_OUTCOMES = Duration.ofMillis(2);

    private final JobStore store;
    private final WorkerId worker;
    private final WorkerSettings settings;
    private final RunsInHand runs;
    private final ClaimedAhead ahead;
    private final OutcomeBatcher outcomes;
    private final WakeSignal signal;
    private final WorkerListener listener;
    private final ErrorReporter errors;
    private final StopLatch stop;
    private final OutageBackoff outage;
    /** {@link JobStore#claimsCarryOutcomes}, as the worker read it: else its {@link OutcomeWriter} takes the outcomes. */
    private final boolean carriesOutcomes;
    private boolean knowsEarlierRuns;
    private boolean claimInDoubt;

    ClaimLoop(JobStore store, WorkerId worker, WorkerSettings settings, RunsInHand runs, ClaimedAhead ahead,
            OutcomeBatcher outcomes, boolean carriesOutcomes, WakeSignal signal, WorkerListener listener, ErrorReporter errors,
            StopLatch stop) {
        this.store = store;
        this.worker = worker;
        this.settings = settings;
        this.runs = runs;
        this.ahead = ahead;
        this.outcomes = outcomes;
        this.signal = signal;
        this.listener = listener;
        this.errors = errors;
        this.stop = stop;
        this.outage = OutageBackoff.of(settings);
        this.carriesOutcomes = carriesOutcomes;
    }

    /** Claims until {@code stop} is thrown (or the thread is interrupted). */
    void loop() {
        while (!stop.isStopped() && !Thread.currentThread().isInterrupted()) {
            try {
                pass();
            } catch (Throwable e) {
                // A bug here (or an Error) must not silently stop this worker from claiming: report it, pause, go on.
                errors.unexpected("claim loop", e);
                if (stop.pause(outage.next())) break;
            }
        }
    }

    /**
     * One pass: catch up on what the store knows of this worker, then claim up to the room carrying the
     * outcomes waiting, or write those alone when there is no room, or wait for news.
     */
    void pass() {
        if (!knowsEarlierRuns && !storeCall(this::noteEarlierRuns)) return;
        if (claimInDoubt && !storeCall(this::adoptLostClaims)) return;
        int room = room();
        if (room == 0) {
            // An outcome whose run gave its slot back, and still no room (the runs writing their outcomes hold
            // it all): nothing will carry it, write it alone. One not handed over yet: its slot frees in a moment.
            if (carriesOutcomes && outcomes.hasHandedOver()) writeOutcomesAlone();
            else signal.await(outcomesWaiting() ? ROOM_FOR_OUTCOMES : settings.pollInterval());
            return;
        }
        int want = Math.min(fill(room), settings.claimBatchSize());
        if (stop.isStopped() || want == 0) { // close() began while fill waited: claim nothing more
            if (outcomesWaiting()) writeOutcomesAlone();
            return;
        }
        // Taken before the request: the store's lease starts later than this, so a deadline counted from
        // here can only be early, never late (see LeaseKeeper).
        long sentNanos = System.nanoTime();
        ClaimRequest request = new ClaimRequest(settings.queues(), worker, want, settings.lease());
        List<OutcomeBatcher.Pending> carried = carriesOutcomes ? outcomes.take() : List.of();
        List<Job> jobs;
        try {
            if (carried.isEmpty()) {
                jobs = store.claim(request);
            } else {
                OutcomesThenClaim both = store.recordOutcomesThenClaim(OutcomeBatcher.writes(carried), request);
                OutcomeBatcher.answer(carried, both.answers());
                jobs = both.claimed();
            }
            outage.reset();
        } catch (Throwable e) {
            claimInDoubt = true; // it may have committed before the failure reached us
            // The outcomes must not share the claim's fate (a claim can fail where a plain write would not):
            // they are written alone at once, and only if that fails too go back to their runs to retry.
            outcomes.writeAlone(carried, e, errors);
            backOff(e);
            return;
        } finally {
            OutcomeBatcher.failUnanswered(carried);
        }
        if (!jobs.isEmpty()) {
            // Reported before the runs start, so a listener sees claimed before completed/failed.
            errors.notify(() -> listener.claimed(List.copyOf(jobs)));
            ahead.add(jobs, sentNanos);
        }
        // A short batch means the queues are drained: wait for news. A full one: go again at once.
        if (jobs.size() < want && !outcomesWaiting()) signal.await(settings.pollInterval());
    }

    /** Whether outcomes wait for this loop to carry them (never where an {@link OutcomeWriter} takes them). */
    private boolean outcomesWaiting() {
        return carriesOutcomes && outcomes.hasWaiting();
    }

    /** Writes the outcomes handed over in one statement, with no claim (there is no room for one). */
    private void writeOutcomesAlone() {
        outcomes.writeWaitingAlone(true, errors);
    }

    /**
     * How many jobs a claim may take now: the free slots, plus the jobs that may still wait for one
     * ({@link WorkerSettings#prefetch()} less those waiting). A freed slot that starts a waiting job leaves
     * it unchanged.
     */
    private int room() {
        return Math.max(0, runs.freeSlots() + settings.prefetch() - ahead.size());
    }

    /**
     * While handlers are running, waits up to {@link WorkerSettings#batchFillWait} for more room, up to
     * {@link #fullClaim()}: runs that end about together are replaced by one full claim (one commit)
     * instead of one claim each. An idle worker, or a lone run ending, claims at once; a stopping one stops
     * waiting (and {@link #pass} then claims nothing).
     *
     * @return the room now
     */
    private int fill(int room) {
        long deadline = System.nanoTime() + settings.batchFillWait().toNanos();
        while (room < fullClaim() && (runs.running() > 0 || ahead.size() > 0) && !stop.isStopped()) {
            long left = deadline - System.nanoTime();
            if (left <= 0) break;
            signal.await(Duration.ofNanos(left));
            room = room();
        }
        // Read again: the loop may have stopped on its running() check after the room it last read was
        // stale (the last handler returning in between), and the slots are given back before running() drops.
        return room();
    }

    /** A full claim: {@code min(claimBatchSize, concurrency + prefetch)} jobs. */
    private int fullClaim() {
        return Math.min(settings.claimBatchSize(), settings.concurrency() + settings.prefetch());
    }

    /**
     * Runs one of the claim loop's other store calls; on failure reports it, backs off and returns false.
     * Reported as operation "claim": to the listener and the metrics they are part of claiming.
     */
    private boolean storeCall(Runnable call) {
        try {
            call.run();
            outage.reset();
            return true;
        } catch (Throwable e) {
            backOff(e);
            return false;
        }
    }

    private void backOff(Throwable e) {
        errors.fatalIfSo("store call", e);
        Duration pause = outage.next();
        errors.storeError("claim", e, pause);
        stop.pause(pause);
    }

    /** At start: runs an earlier process with this worker id left leased are not ours to adopt. */
    private void noteEarlierRuns() {
        List<Job> earlier = store.runsLeasedTo(worker, RunsInHand.LET_GO_REMEMBERED);
        for (Job job : earlier) runs.letGo(job.fencingToken());
        knowsEarlierRuns = true;
        if (!earlier.isEmpty()) {
            log.atInfo().addKeyValue("worker", worker).log("worker {}: {} run(s) of an earlier process with this worker id"
                    + " are still leased to it; they are left to their leases", worker, earlier.size());
        }
    }

    /** After a failed claim: starts the runs it committed (see the class). */
    private void adoptLostClaims() {
        List<Job> lost = new ArrayList<>();
        int room = room();
        for (Job job : store.runsLeasedTo(worker, RunsInHand.LET_GO_REMEMBERED)) {
            FencingToken token = job.fencingToken();
            if (!runs.holds(token) && !ahead.holds(token) && !runs.wasLetGo(token) && lost.size() < room) lost.add(job);
        }
        if (!lost.isEmpty()) {
            long sentNanos = System.nanoTime();
            Set<FencingToken> gone = store.heartbeat(lost.stream().map(Job::fencingToken).toList(), settings.lease());
            List<Job> adopted = lost.stream().filter(j -> !gone.contains(j.fencingToken())).toList();
            if (!adopted.isEmpty()) {
                log.atInfo().addKeyValue("worker", worker).log("worker {}: a claim committed but its answer was lost;"
                        + " adopting {} run(s): {}", worker, adopted.size(), adopted.stream().map(Job::fencingToken).toList());
                errors.notify(() -> listener.claimed(adopted));
                ahead.add(adopted, sentNanos);
            }
        }
        claimInDoubt = false;
    }
}
