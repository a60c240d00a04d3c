package io.jobq.application.worker;

import io.jobq.domain.job.Job;
import io.jobq.domain.lease.FencingToken;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Claimed jobs waiting for an execution slot, oldest claim first, and the one place runs are started
 * from. Every claimed job passes through here: {@link #add} queues it and {@link #dispatch} starts
 * waiting jobs while slots are free; a run giving its slot back dispatches again at once, on its own
 * thread, so a job claimed ahead ({@link WorkerSettings#prefetch()}) starts without waiting for the
 * claim loop, which may be in the middle of its next claim. With no prefetch, a claim asks for at most
 * the free slots and its jobs start at once; nothing waits here.
 *
 * <p>A waiting job is leased like a running one: the {@link LeaseKeeper} heartbeats it ({@link #tokens},
 * {@link #extended}), a lost lease drops it unstarted ({@link #drop}), and shutdown gives every waiting
 * job back to the store unrun ({@link #takeAll}, then {@link io.jobq.application.port.JobStore#release}).
 * Thread-safe without a lock (every run ending calls {@link #dispatch}, so a monitor here was contended
 * by every job thread): see {@link #dispatch} for why no job is left waiting beside a free slot.
 */
final class ClaimedAhead {
    private static final Logger log = LoggerFactory.getLogger(ClaimedAhead.class);

    /** A claimed job not started yet, with the earliest moment its lease may lapse ({@link System#nanoTime()}). */
    private static final class Waiting {
        final Job job;
        volatile long leaseDeadlineNanos;

        Waiting(Job job, long leaseDeadlineNanos) {
            this.job = job;
            this.leaseDeadlineNanos = leaseDeadlineNanos;
        }
    }

    private final ConcurrentLinkedQueue<Waiting> waiting = new ConcurrentLinkedQueue<>();
    /**
     * Tokens of the jobs waiting AND of those being started: a token leaves only once its run is in
     * {@link RunsInHand} (or never will be), so "held by neither" is never true of a job in between, and
     * the claim loop cannot adopt it as a lost claim while it starts (see {@link #holds}).
     */
    private final Set<FencingToken> known = ConcurrentHashMap.newKeySet();
    private final WorkerListener listener;
    private final ErrorReporter errors;
    private final RunsInHand runs;
    private final JobRunner runner;
    private final long leaseNanos;

    ClaimedAhead(RunsInHand runs, JobRunner runner, WorkerSettings settings, WorkerListener listener, ErrorReporter errors) {
        this.listener = listener;
        this.errors = errors;
        this.runs = runs;
        this.runner = runner;
        this.leaseNanos = TimeUnit.MILLISECONDS.toNanos(settings.lease().toMillis());
    }

    /**
     * Queues jobs just claimed (or adopted), then starts as many as slots are free.
     *
     * @param sentNanos {@link System#nanoTime()} when the claim (or the heartbeat confirming an adopted run)
     *     was sent: the store's lease runs from no earlier, so a deadline counted from here is never late
     */
    void add(List<Job> jobs, long sentNanos) {
        for (Job job : jobs) {
            // a token already in hand is never queued twice (one run per token)
            if (!runs.holds(job.fencingToken()) && known.add(job.fencingToken())) {
                waiting.add(new Waiting(job, sentNanos + leaseNanos));
            }
        }
        dispatch();
    }

    /**
     * Starts waiting jobs, oldest claim first, while a slot is free. Called after {@link #add} and after
     * every slot given back. No job is left waiting beside a free slot: a call that stops early saw either
     * no job waiting (a job added later brings its own call) or no free slot (a slot given back later
     * brings its own call), and one that took a slot but found the job gone (another call started it)
     * gives the slot back, which calls this again. A job whose lease may have lapsed while it waited (no
     * heartbeat got through within a lease, so another worker may own it by now) is not started: it is
     * left to its lease, as after a crash.
     */
    void dispatch() {
        while (!waiting.isEmpty() && runs.takeSlot()) {
            Waiting next = waiting.poll();
            while (next != null && lapsed(next)) next = waiting.poll();
            if (next == null) {
                runs.returnSlot();
                return;
            }
            try {
                runner.startInSlot(next.job, next.leaseDeadlineNanos);
            } finally {
                known.remove(next.job.fencingToken()); // in RunsInHand now, or never to be
            }
        }
    }

    private boolean lapsed(Waiting w) {
        if (System.nanoTime() - w.leaseDeadlineNanos < 0) return false;
        FencingToken token = w.job.fencingToken();
        runs.letGo(token); // never adopted as a lost claim either
        known.remove(token);
        log.atWarn().addKeyValue("job", token.job()).log("run {} waited for a slot past its lease (no heartbeat reached the"
                + " store in time); it is not started but left to its lease", token);
        errors.notify(() -> listener.discarded(token, DiscardReason.LEASE_LOST));
        return true;
    }

    /** How many jobs wait for a slot. */
    int size() {
        return waiting.size();
    }

    /**
     * Whether {@code token}'s job waits here or is being started. Checked after {@link RunsInHand#holds}
     * or before it, a job moving from here to there is seen in one of them.
     */
    boolean holds(FencingToken token) {
        return known.contains(token);
    }

    /** The waiting jobs' tokens, for the heartbeat. */
    List<FencingToken> tokens() {
        List<FencingToken> tokens = new ArrayList<>(waiting.size());
        for (Waiting w : waiting) tokens.add(w.job.fencingToken());
        return tokens;
    }

    /** A heartbeat sent at {@code deadline - lease} extended these leases (tokens not waiting here are ignored). */
    void extended(Collection<FencingToken> tokens, long deadline) {
        Set<FencingToken> set = Set.copyOf(tokens);
        for (Waiting w : waiting) {
            if (set.contains(w.job.fencingToken())) w.leaseDeadlineNanos = deadline;
        }
    }

    /**
     * Takes these jobs out unstarted (their lease was lost, or their job cancelled).
     *
     * @return the tokens that were waiting here
     */
    List<FencingToken> drop(Collection<FencingToken> tokens) {
        Set<FencingToken> set = Set.copyOf(tokens);
        List<FencingToken> dropped = new ArrayList<>();
        for (Waiting w : waiting) {
            // remove(w) is false when a dispatch took it first: then it runs, and its own lease decides
            if (set.contains(w.job.fencingToken()) && waiting.remove(w)) {
                known.remove(w.job.fencingToken());
                dropped.add(w.job.fencingToken());
            }
        }
        return dropped;
    }

    /** Whether some waiting job's lease may have lapsed by {@code nowNanos} (no heartbeat reached the store in time). */
    boolean anyLeaseLapsed(long nowNanos) {
        for (Waiting w : waiting) {
            if (nowNanos - w.leaseDeadlineNanos >= 0) return true;
        }
        return false;
    }

    /** Empties the queue (shutdown): nothing waiting starts from now on. @return the tokens taken, oldest claim first */
    List<FencingToken> takeAll() {
        List<FencingToken> all = new ArrayList<>();
        for (Waiting w = waiting.poll(); w != null; w = waiting.poll()) {
            known.remove(w.job.fencingToken());
            all.add(w.job.fencingToken());
        }
        return all;
    }
}
