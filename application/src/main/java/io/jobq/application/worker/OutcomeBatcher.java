package io.jobq.application.worker;

import io.jobq.application.port.FencedWrite;
import io.jobq.application.port.JobStore;
import io.jobq.application.port.OutcomeWrite;
import io.jobq.domain.job.JobId;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntSupplier;

/**
 * Group commit of run outcomes: each run's thread hands its {@link OutcomeWrite} over and waits; one
 * flusher thread writes whatever has gathered in ONE {@link JobStore#recordOutcomes} call (one statement,
 * one commit) and hands each run its own answer. A run is therefore reported done only after the commit
 * that made it so, and a busy worker pays about one commit per batch instead of one per job.
 *
 * <p>A flush takes every outcome waiting, up to {@code maxBatch}; while handlers are still running
 * it waits up to {@code flushWait} for theirs, and never when no handler is running; an outcome with no
 * handler running beside it, and none waiting for a flush, is written on its run's own thread, with no
 * hand-over at all. Two outcomes of one job (two attempts of it in this worker) go in different flushes.
 * A flush that throws fails every write in it, each of which its run's {@link OutcomeRecorder} may try
 * again; nothing is lost meanwhile, since the runs' leases stand until they lapse. With
 * {@code maxBatch == 1} there is no flusher: each run writes on its own thread.
 */
final class OutcomeBatcher {
    /** One outcome waiting for its flush. */
    private record Pending(OutcomeWrite write, CompletableFuture<FencedWrite> answer) {}

    private final JobStore store;
    private final int maxBatch;
    private final Duration flushWait;
    private final IntSupplier running;
    private final ErrorReporter errors;
    private final LinkedBlockingQueue<Pending> queue = new LinkedBlockingQueue<>();
    /** Outcomes of a job already in the flush being gathered: they wait for the next one. */
    private final Deque<Pending> deferred = new ConcurrentLinkedDeque<>();
    /** Outcomes handed to the flusher and not yet answered. */
    private final AtomicInteger handedOver = new AtomicInteger();
    private final Thread flusher;
    private volatile boolean closed;

    /**
     * @param running how many handlers are running now, whose outcomes may come soon (a run writing here
     *     has stopped counting): a flush waits for more only while this is above 0
     */
    OutcomeBatcher(JobStore store, int maxBatch, Duration flushWait, IntSupplier running, ErrorReporter errors,
            String workerName) {
        this.store = store;
        this.maxBatch = maxBatch;
        this.flushWait = flushWait;
        this.running = running;
        this.errors = errors;
        this.flusher = maxBatch == 1 ? null
                : Thread.ofPlatform().daemon().name("jobq-outcomes-" + workerName).unstarted(this::flushUntilClosed);
    }

    void start() {
        if (flusher != null) flusher.start();
    }

    /**
     * Writes {@code write} with the next flush and returns the store's answer for it. Waits for that
     * answer even when interrupted (a flush takes milliseconds, and a run must not report as lost an
     * outcome that then commits); the interrupt is kept for the caller.
     *
     * @throws RuntimeException or Error: what the flush's store call threw (the write may be tried again)
     */
    FencedWrite write(OutcomeWrite write) {
        // With no handler running and no outcome waiting for a flush, there is nothing to share a commit
        // with: skip the hand-over to the flusher. (With one waiting, join it: the flusher may be waiting for this.)
        if (flusher == null || closed || !flusher.isAlive() || (running.getAsInt() <= 0 && handedOver.get() == 0)) {
            return direct(write);
        }
        Pending p = new Pending(write, new CompletableFuture<>());
        handedOver.incrementAndGet();
        queue.add(p);
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return p.answer().get(100, TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (TimeoutException e) {
                    // the flusher ended (closed, or killed by a fatal error) after this was queued
                    if (!flusher.isAlive() && (queue.remove(p) || deferred.remove(p))) return direct(write);
                } catch (ExecutionException e) {
                    Throwable cause = e.getCause();
                    if (cause instanceof RuntimeException r) throw r;
                    if (cause instanceof Error err) throw err;
                    throw new IllegalStateException(cause);
                }
            }
        } finally {
            handedOver.decrementAndGet();
            if (interrupted) Thread.currentThread().interrupt();
        }
    }

    private FencedWrite direct(OutcomeWrite write) {
        return store.recordOutcomes(List.of(write)).getFirst();
    }

    /**
     * Stops the flusher once everything handed over is written, waiting for that at most {@code timeout};
     * later writes go straight to the store.
     */
    void close(Duration timeout) throws InterruptedException {
        closed = true;
        if (flusher != null && flusher.isAlive()) flusher.join(timeout);
    }

    /** {@link #close(Duration)} with 5 s. */
    void close() throws InterruptedException {
        close(Duration.ofSeconds(5));
    }

    private void flushUntilClosed() {
        while (true) {
            List<Pending> batch = new ArrayList<>();
            try {
                gather(batch);
                if (batch.isEmpty()) {
                    if (closed && queue.isEmpty() && deferred.isEmpty()) return;
                    continue;
                }
                flush(batch);
            } catch (Throwable e) {
                // Whatever went wrong, no run may wait forever for an answer that will not come.
                for (Pending p : batch) p.answer().completeExceptionally(e);
                if (e instanceof InterruptedException) {
                    if (closed) return;
                } else {
                    errors.fatalIfSo("outcome flusher", e); // a fatal error ends the process; anything else: go on
                }
            }
        }
    }

    /** Fills {@code batch} (empty on entry) with the next flush's outcomes; empty if none came for a while. */
    private void gather(List<Pending> batch) throws InterruptedException {
        Set<JobId> jobs = new HashSet<>();
        // Each deferred outcome is looked at once per flush: two of one job deferred must not chase each other.
        for (int n = deferred.size(); n > 0 && batch.size() < maxBatch; n--) add(deferred.poll(), batch, jobs);
        if (batch.isEmpty()) {
            Pending first = queue.poll(50, TimeUnit.MILLISECONDS);
            if (first == null) return;
            add(first, batch, jobs);
        }
        long deadline = System.nanoTime() + flushWait.toNanos();
        while (batch.size() < maxBatch) {
            Pending next = queue.poll();
            if (next == null) {
                long left = deadline - System.nanoTime();
                if (left <= 0 || running.getAsInt() <= 0) break;
                next = queue.poll(left, TimeUnit.NANOSECONDS);
                if (next == null) break;
            }
            add(next, batch, jobs);
        }
    }

    private void add(Pending p, List<Pending> batch, Set<JobId> jobs) {
        if (jobs.add(p.write().token().job())) batch.add(p);
        else deferred.add(p);
    }

    /** Answers every outcome of {@code batch}; throws only after that, and only an Error. */
    private void flush(List<Pending> batch) {
        List<FencedWrite> answers;
        try {
            answers = store.recordOutcomes(batch.stream().map(Pending::write).toList());
            if (answers.size() != batch.size()) {
                throw new IllegalStateException("the store answered " + answers.size() + " of " + batch.size() + " outcomes");
            }
        } catch (Throwable e) {
            for (Pending p : batch) p.answer().completeExceptionally(e);
            if (e instanceof Error err) throw err;
            return;
        }
        for (int i = 0; i < batch.size(); i++) batch.get(i).answer().complete(answers.get(i));
    }
}
