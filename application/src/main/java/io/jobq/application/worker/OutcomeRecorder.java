package io.jobq.application.worker;

import io.jobq.application.port.FencedWrite;
import io.jobq.application.port.JobStore;
import io.jobq.application.port.OutcomeWrite;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobState;
import io.jobq.domain.job.StoredText;
import io.jobq.domain.lease.FencingToken;
import io.jobq.domain.retry.FailureKind;
import io.jobq.domain.retry.RetryDecision;
import io.jobq.domain.retry.RetryPolicy;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Records each run's outcome in the store, fenced by the run's token, through the worker's
 * {@link OutcomeBatcher} (a run's outcome commits with those of other runs ending about then):
 * {@link OutcomeWrite.Complete} for a success, {@link OutcomeWrite.Fail} for a failure with the {@link RetryDecision} the worker's {@link RetryPolicy}
 * makes from the attempt, the job's max attempts and the {@link FailureKind}. A write that throws is tried {@value Worker#WRITE_ATTEMPTS}
 * times in all (pauses 200 ms, 400 ms) and then left to the lease: a job is never reported done unless the
 * store said so. A write the store rejects (the run was reaped or re-claimed meanwhile) changes nothing and
 * the outcome is discarded ({@link DiscardReason#WRITE_REJECTED}), unless it is a later try that finds the row
 * as this very write left it: then an earlier try committed and only its answer was lost ({@link #showsThisWrite}).
 *
 * <p>A write the store answers {@link FencedWrite.Held} (another transaction holds the row: an application's
 * open transaction cancelling the job, or the worker's own heartbeat for a moment) is made again after a
 * pause, {@value #HELD_FIRST_PAUSE_MS} ms doubling up to {@value #HELD_MAX_PAUSE_MS} ms, for at most one lease
 * from the first such answer, and then left to the lease. The pause stays short because the heartbeat
 * cannot extend a held row's lease either: a hold longer than the lease has left lets it lapse, and once the
 * holder commits the reaper may take the job before the write is made again (the run is then discarded and
 * the job runs again: at least once, never lost).
 */
final class OutcomeRecorder {
    private static final Logger log = LoggerFactory.getLogger(OutcomeRecorder.class);

    /** The pause before the second outcome write; it doubles before each further one. */
    static final Duration WRITE_RETRY_PAUSE = Duration.ofMillis(200);
    /** The pause before a held write is made again, in ms; it doubles up to {@link #HELD_MAX_PAUSE_MS}. */
    static final long HELD_FIRST_PAUSE_MS = 5;
    static final long HELD_MAX_PAUSE_MS = 50;

    private final OutcomeBatcher outcomes;
    private final RetryPolicy retryPolicy;
    private final WorkerListener listener;
    private final ErrorReporter errors;
    private final InstantSource clock;
    private final BooleanSupplier abandoning;
    private final RunsInHand runs;
    private final Duration lease;

    /**
     * @param abandoning true once shutdown has given up on runs in hand: a failing write is not retried then
     * @param runs told of every run let go without its outcome written, whose lease may still be this worker's
     * @param lease how long a held write is made again before it is left to the lease
     */
    OutcomeRecorder(OutcomeBatcher outcomes, RetryPolicy retryPolicy, WorkerListener listener, ErrorReporter errors,
            InstantSource clock, BooleanSupplier abandoning, RunsInHand runs, Duration lease) {
        this.runs = runs;
        this.lease = lease;
        this.outcomes = outcomes;
        this.retryPolicy = retryPolicy;
        this.listener = listener;
        this.errors = errors;
        this.clock = clock;
        this.abandoning = abandoning;
    }

    /**
     * Records {@code outcome}, unless the lease was lost meanwhile (then nobody may write for this run).
     *
     * @param handedOver called exactly once: when the outcome is handed to the claim loop (or is about to be
     *     written, or is discarded); the run's slot is given back there (see {@link OutcomeBatcher#write})
     */
    void record(Run run, Outcome outcome, Runnable handedOver) {
        Runnable once = new Runnable() {
            private boolean ran;

            @Override
            public void run() {
                if (!ran) {
                    ran = true;
                    handedOver.run();
                }
            }
        };
        try {
            if (run.leaseLost) {
                once.run();
                discard(run, DiscardReason.LEASE_LOST, "its lease was lost while the handler ran");
                return;
            }
            switch (outcome) {
                case Outcome.Succeeded s -> complete(run, s, once);
                case Outcome.Failed f -> fail(run, f, once);
            }
        } finally {
            once.run();
        }
    }

    private void complete(Run run, Outcome.Succeeded s, Runnable handedOver) {
        FencingToken token = run.token;
        Optional<Duration> ran = Optional.of(run.ranSoFar());
        Optional<FencedWrite> write = writeWithRetries("complete", run, new OutcomeWrite.Complete(token, s.resultJson(), ran), handedOver);
        if (write.isEmpty()) return;
        switch (write.get()) {
            case FencedWrite.Applied applied -> {
                long tookMs = run.elapsed(clock).toMillis();
                JobLogFields.of(log.atDebug(), run.job).addKeyValue("tookMs", tookMs)
                        .log("job {} done (attempt {}/{}, {} ms)", run.job.id(), run.job.attempts(), run.job.maxAttempts(), tookMs);
                errors.notify(() -> listener.completed(applied.job()));
                errors.notify(() -> listener.runEnded(applied.job(), ran.get()));
            }
            case FencedWrite.Rejected rejected -> discard(run, DiscardReason.WRITE_REJECTED,
                    "the store refused its completion: " + describeCurrent(rejected));
            case FencedWrite.Held held -> throw new IllegalStateException("writeWithRetries answers no held write");
        }
    }

    private void fail(Run run, Outcome.Failed f, Runnable handedOver) {
        FencingToken token = run.token;
        String error = StoredText.sanitize(f.error(), JobStore.MAX_ERROR_BYTES);
        // Decided once: a write tried again writes the same decision, not a fresh draw.
        RetryDecision decision = retryPolicy.decide(token.attempt(), run.job.maxAttempts(), f.kind());
        Optional<Duration> ran = Optional.of(run.ranSoFar());
        Optional<FencedWrite> write = writeWithRetries("fail", run, new OutcomeWrite.Fail(token, error, decision, ran), handedOver);
        if (write.isEmpty()) return;
        switch (write.get()) {
            case FencedWrite.Applied applied -> {
                if (applied.job().state() == JobState.CANCELLED) {
                    JobLogFields.of(log.atInfo(), run.job).log("job {} cancelled (attempt {} ended: {})", run.job.id(),
                            run.job.attempts(), error);
                } else {
                    logFailure(run.job, decision, error, f);
                }
                errors.notify(() -> listener.failed(run.job, error, applied.job()));
                errors.notify(() -> listener.runEnded(applied.job(), ran.get()));
            }
            case FencedWrite.Rejected rejected -> discard(run, DiscardReason.WRITE_REJECTED,
                    "the store refused its failure (" + error + "): " + describeCurrent(rejected));
            case FencedWrite.Held held -> throw new IllegalStateException("writeWithRetries answers no held write");
        }
    }

    /**
     * Tries {@code write} up to {@link Worker#WRITE_ATTEMPTS} times. A write whose commit succeeded but whose
     * answer was lost is tried again (by this run, or at once by the claim loop) and then rejected; a
     * rejection that shows the row as this very write left it ({@link #showsThisWrite}) is therefore counted
     * as applied. A held write is made again ({@link #pauseWhileHeld}); that counts as no try.
     *
     * @return the store's answer, applied or rejected, or empty when every try threw or the row stayed held
     *     (the run is then discarded)
     */
    private Optional<FencedWrite> writeWithRetries(String operation, Run run, OutcomeWrite write, Runnable handedOver) {
        Duration pause = WRITE_RETRY_PAUSE;
        long heldSince = 0;
        long heldPauseMs = HELD_FIRST_PAUSE_MS;
        for (int attempt = 1; ; ) {
            try {
                FencedWrite result = outcomes.write(write, handedOver);
                if (result instanceof FencedWrite.Held) {
                    if (heldSince == 0) {
                        heldSince = System.nanoTime() | 1; // never 0
                        // DEBUG: the worker's own heartbeat holds a row for a moment now and then
                        JobLogFields.of(log.atDebug(), run.job).log("job {} attempt {}: another transaction holds its"
                                + " row (a heartbeat, a cancel not yet committed); its {} is written again once that ends",
                                run.job.id(), run.job.attempts(), operation);
                    }
                    if (!pauseWhileHeld(heldSince, heldPauseMs)) {
                        runs.letGo(run.token);
                        discard(run, DiscardReason.WRITE_FAILED, abandoning.getAsBoolean()
                                ? "shutdown gave up on it while another transaction held its row; it is left to its lease"
                                : "another transaction held its row for the whole " + lease.toMillis()
                                        + " ms lease; it is left to its lease");
                        return Optional.empty();
                    }
                    heldPauseMs = Math.min(HELD_MAX_PAUSE_MS, heldPauseMs * 2);
                    continue;
                }
                // Also on the first try: the claim loop writes again, alone, what a claim of its own that threw carried.
                if (result instanceof FencedWrite.Rejected r && r.current().filter(j -> showsThisWrite(j, write)).isPresent()) {
                    return Optional.of(new FencedWrite.Applied(r.current().get()));
                }
                return Optional.of(result);
            } catch (Throwable e) {
                errors.fatalIfSo("store call", e);
                boolean last = attempt >= Worker.WRITE_ATTEMPTS || abandoning.getAsBoolean();
                errors.storeError(operation, e, last ? null : pause);
                if (last) break;
                try {
                    Thread.sleep(pause);
                } catch (InterruptedException ie) {
                    break;
                }
                pause = pause.multipliedBy(2);
                attempt++;
            }
        }
        runs.letGo(run.token); // before the run ends: the claim loop must never take it for a lost claim
        discard(run, DiscardReason.WRITE_FAILED, "its " + operation + " kept failing; it is left to its lease");
        return Optional.empty();
    }

    /**
     * Pauses {@code pauseMs} before a held write is made again, unless the row has been held for a whole lease
     * since {@code heldSince} ({@link System#nanoTime()}) or shutdown is abandoning runs: then the write is left
     * to the lease (the transaction holding the row may be a reaper's, or one left open for good).
     *
     * @return whether to write again
     */
    private boolean pauseWhileHeld(long heldSince, long pauseMs) {
        if (abandoning.getAsBoolean() || System.nanoTime() - heldSince >= lease.toNanos()) return false;
        try {
            Thread.sleep(pauseMs);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
        return !abandoning.getAsBoolean(); // shutdown may have given up on the run meanwhile
    }

    /**
     * Whether {@code current}, the row that refused {@code write} on a later try, is what {@code write} itself
     * made of it, so that an earlier try committed and only its answer was lost: a complete whose job is done
     * at this very attempt (only this run can complete that attempt); a fail whose job is out of running at
     * this attempt, unleased, with this write's error text (the reaper and cancels write their own texts).
     */
    static boolean showsThisWrite(Job current, OutcomeWrite write) {
        if (current.attempts() != write.token().attempt()) return false;
        return switch (write) {
            case OutcomeWrite.Complete c -> current.state() == JobState.DONE;
            case OutcomeWrite.Fail f -> current.state() != JobState.RUNNING && current.lockedBy().isEmpty()
                    && current.lastError().filter(e -> e.equals(f.error())).isPresent();
        };
    }

    /** Logs the failure as it was decided (the store wrote exactly that). */
    private static void logFailure(Job claimed, RetryDecision decision, String error, Outcome.Failed f) {
        // Stack traces only for unexpected exceptions; a PermanentJobFailure's message says it all.
        Throwable stack = f.kind() == FailureKind.PERMANENT ? null : f.cause();
        switch (decision) {
            case RetryDecision.Dead dead -> JobLogFields.of(log.atWarn(), claimed).addKeyValue("failure", f.kind())
                    .addKeyValue("cause", dead.cause()).setCause(stack)
                    .log("job {} is dead after attempt {}/{} ({}): {}", claimed.id(), claimed.attempts(),
                            claimed.maxAttempts(), dead.cause().description(), error);
            case RetryDecision.RetryAfter retry -> JobLogFields.of(log.atInfo(), claimed).addKeyValue("failure", f.kind())
                    .addKeyValue("retryDelayMs", retry.delay().toMillis()).setCause(stack)
                    .log("job {} failed on attempt {}/{}, retry in {} ms: {}", claimed.id(), claimed.attempts(),
                            claimed.maxAttempts(), retry.delay().toMillis(), error);
        }
    }

    /** Drops the run's outcome: nothing is written for it; its lease decides what happens to the job. */
    void discard(Run run, DiscardReason reason, String why) {
        JobLogFields.of(log.atWarn(), run.job).addKeyValue("reason", reason)
                .log("job {} attempt {}: outcome discarded, {}", run.job.id(), run.job.attempts(), why);
        errors.notify(() -> listener.discarded(run.token, reason));
    }

    private static String describeCurrent(FencedWrite.Rejected rejected) {
        return rejected.current()
                .map(j -> "the job is now " + j.state().dbName() + " at attempt " + j.attempts()
                        + j.lockedBy().map(w -> " held by " + w).orElse(""))
                .orElse("the job no longer exists");
    }
}
