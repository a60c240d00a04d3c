package io.jobq.application.worker;

import io.jobq.domain.job.Job;
import io.jobq.domain.lease.FencingToken;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

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
 * Thread-safe: one monitor guards the queue; starting a run under it only parses the payload and starts
 * a virtual thread.
 */
final class ClaimedAhead {
    /** A claimed job not started yet, with the earliest moment its lease may lapse ({@link System#nanoTime()}). */
    private static final class Waiting {
        final Job job;
        long leaseDeadlineNanos;

        Waiting(Job job, long leaseDeadlineNanos) {
            this.job = job;
            this.leaseDeadlineNanos = leaseDeadlineNanos;
        }
    }

    private final ArrayDeque<Waiting> waiting = new ArrayDeque<>();
    private final RunsInHand runs;
    private final JobRunner runner;
    private final long leaseNanos;

    ClaimedAhead(RunsInHand runs, JobRunner runner, WorkerSettings settings) {
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
        synchronized (this) {
            for (Job job : jobs) waiting.add(new Waiting(job, sentNanos + leaseNanos));
        }
        dispatch();
    }

    /** Starts waiting jobs, oldest claim first, while a slot is free. Called after {@link #add} and whenever a slot frees. */
    void dispatch() {
        synchronized (this) {
            // Only this method starts runs, under this monitor, so a free slot seen here is still free when
            // the runner takes it (slots are only given back meanwhile), except once shutdown took them all.
            while (!waiting.isEmpty() && runs.freeSlots() > 0) {
                Waiting next = waiting.poll();
                runner.start(next.job, next.leaseDeadlineNanos);
            }
        }
    }

    /** How many jobs wait for a slot. */
    synchronized int size() {
        return waiting.size();
    }

    /** Whether {@code token}'s job waits here. */
    synchronized boolean holds(FencingToken token) {
        for (Waiting w : waiting) {
            if (w.job.fencingToken().equals(token)) return true;
        }
        return false;
    }

    /** The waiting jobs' tokens, for the heartbeat. */
    synchronized List<FencingToken> tokens() {
        List<FencingToken> tokens = new ArrayList<>(waiting.size());
        for (Waiting w : waiting) tokens.add(w.job.fencingToken());
        return tokens;
    }

    /** A heartbeat sent at {@code deadline - lease} extended these leases (tokens not waiting here are ignored). */
    synchronized void extended(Collection<FencingToken> tokens, long deadline) {
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
    synchronized List<FencingToken> drop(Collection<FencingToken> tokens) {
        Set<FencingToken> set = Set.copyOf(tokens);
        List<FencingToken> dropped = new ArrayList<>();
        for (Iterator<Waiting> it = waiting.iterator(); it.hasNext(); ) {
            FencingToken token = it.next().job.fencingToken();
            if (set.contains(token)) {
                it.remove();
                dropped.add(token);
            }
        }
        return dropped;
    }

    /** Whether some waiting job's lease may have lapsed by {@code nowNanos} (no heartbeat reached the store in time). */
    synchronized boolean anyLeaseLapsed(long nowNanos) {
        for (Waiting w : waiting) {
            if (nowNanos - w.leaseDeadlineNanos >= 0) return true;
        }
        return false;
    }

    /** Empties the queue (shutdown): nothing waiting starts from now on. @return the tokens taken, oldest claim first */
    synchronized List<FencingToken> takeAll() {
        List<FencingToken> all = tokens();
        waiting.clear();
        return all;
    }
}
