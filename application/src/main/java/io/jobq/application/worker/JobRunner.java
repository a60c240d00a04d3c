package io.jobq.application.worker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.lease.WorkerId;
import io.jobq.domain.retry.FailureKind;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs claimed jobs: each on its own virtual thread, under its task's timeout, and hands what the run
 * came to to the {@link OutcomeRecorder}.
 *
 * <h2>What a run comes to</h2>
 * The handler's return → {@link Outcome.Succeeded}. A {@link PermanentJobFailure} (also in the cause
 * chain) or a payload that is not JSON → {@link FailureKind#PERMANENT}. A timeout → {@link FailureKind#TIMEOUT}.
 * Anything else the handler throws, an {@link Error} included, and a task with no handler on this worker →
 * {@link FailureKind#ERROR}: no handler fails <em>retryably</em>, naming the task and this worker, because
 * during a rolling deploy another worker may already know the task, and {@code max_attempts} still bounds
 * the retries. An error the JVM cannot be trusted after goes to the {@link FatalErrorPolicy} first.
 *
 * <h2>Timeouts</h2>
 * A run gets {@link WorkerSettings#timeoutFor} its task. When it fires, the run's {@link JobContext} is
 * cancelled and its thread interrupted; whatever the handler then returns, the run fails as timed out. A
 * handler that ignores the interrupt gets a grace of as long again as its timeout, at most
 * {@link Worker#TIMEOUT_GRACE_CAP} (5 s). Then the timeout failure is recorded without waiting for it, the
 * run leaves the heartbeat and its slot is given back, so a hung handler costs the worker none of its
 * concurrency and keeps no lease alive. Its thread, which Java cannot stop, may run on; what it returns is
 * discarded, with a WARN.
 */
final class JobRunner {
    private static final Logger log = LoggerFactory.getLogger(JobRunner.class);

    private final WorkerId worker;
    private final Map<TaskName, JobHandler> handlers;
    private final WorkerSettings settings;
    private final RunsInHand runs;
    private final OutcomeRecorder recorder;
    private final PayloadParser parser;
    private final ObjectMapper mapper;
    private final InstantSource clock;
    private final WorkerListener listener;
    private final ErrorReporter errors;
    private final BooleanSupplier abandoning;
    private volatile ScheduledExecutorService timer;

    JobRunner(WorkerId worker, Map<TaskName, JobHandler> handlers, WorkerSettings settings, RunsInHand runs,
            OutcomeRecorder recorder, ObjectMapper mapper, InstantSource clock, WorkerListener listener,
            ErrorReporter errors, BooleanSupplier abandoning) {
        this.worker = worker;
        this.handlers = handlers;
        this.settings = settings;
        this.runs = runs;
        this.recorder = recorder;
        this.parser = new PayloadParser(mapper);
        this.mapper = mapper;
        this.clock = clock;
        this.listener = listener;
        this.errors = errors;
        this.abandoning = abandoning;
    }

    /** The timer that times runs out; set once, when the worker starts. */
    void useTimer(ScheduledExecutorService timer) {
        this.timer = timer;
    }

    /**
     * Starts a run of {@code job}, claimed, on the slot {@link ClaimedAhead#dispatch} took for it (the only
     * caller). Once shutdown is abandoning runs the slot is given back and the job left to its lease.
     *
     * @param leaseDeadlineNanos {@link System#nanoTime()} from which its lease may have lapsed unless a
     *     heartbeat extends it (see {@link Run#leaseDeadlineNanos})
     */
    void startInSlot(Job job, long leaseDeadlineNanos) {
        if (abandoning.getAsBoolean()) {
            runs.returnSlot();
            log.atWarn().addKeyValue("job", job.id()).log(
                    "job {} was claimed while worker {} shut down; it is left to its lease", job.id(), worker);
            errors.notify(() -> listener.discarded(job.fencingToken(), DiscardReason.SHUTDOWN));
            return;
        }
        Run run = null;
        try {
            PayloadParser.Parsed payload = parser.parse(job);
            run = new Run(job, new JobContext(job, payload.node(), mapper), payload.failure(), clock.instant(),
                    leaseDeadlineNanos);
            Run started = run;
            runs.add(run);
            run.thread = Thread.ofVirtual().name("jobq-job-" + job.id() + "#" + job.attempts()).unstarted(() -> execute(started));
            settings.timeoutFor(job.task()).ifPresent(timeout -> started.timeout = schedule(() -> timeOut(started, timeout), timeout));
            JobLogFields.of(log.atDebug(), job).addKeyValue("token", run.token)
                    .log("job {} attempt {}/{} started", job.id(), job.attempts(), job.maxAttempts());
            run.thread.start();
        } catch (Throwable e) {
            abortStart(job, run, e);
        }
    }

    /**
     * A run that could not be started gives its slot back, so the rest of the batch and later claims still
     * run; the job is left to its lease (reaped, counting an attempt), as after a crash.
     */
    private void abortStart(Job job, Run run, Throwable e) {
        boolean fatal = FatalErrorPolicy.isFatal(e);
        if (fatal) errors.fatalIfSo("start of a run", e);
        boolean started = run != null && run.thread != null && run.thread.getState() != Thread.State.NEW;
        if (!started) {
            if (run != null) {
                run.cancelTimeout();
                if (runs.holds(run.token)) runs.end(run);
                else runs.returnSlot();
            } else {
                runs.returnSlot();
            }
        }
        if (!fatal) {
            JobLogFields.of(log.atError(), job).setCause(e).log("job {} attempt {} could not be started on worker {}; it"
                    + " is left to its lease: {}", job.id(), job.attempts(), worker, e.toString());
        }
    }

    private void execute(Run run) {
        try {
            Outcome outcome = invoke(run);
            Run.Phase finishedFrom = run.finish();
            if (finishedFrom == Run.Phase.RUNNING) {
                // the handler's own outcome stands; a failure after a cancel request says so first (a bare
                // "java.lang.InterruptedException" in last_error told nobody why the job was cancelled)
                if (outcome instanceof Outcome.Failed f && run.context.cancellationReason().filter(r -> r.startsWith("cancelled:")).isPresent()) {
                    outcome = new Outcome.Failed(run.context.cancellationReason().get() + "; the handler ended with: " + f.error(),
                            f.kind(), f.cause());
                }
            } else if (finishedFrom == Run.Phase.TIMED_OUT) {
                outcome = new Outcome.Failed(run.timeoutReason == null ? "timed out" : run.timeoutReason, FailureKind.TIMEOUT, null);
            } else {
                if (run.phase.get() == Run.Phase.RELEASED) {
                    JobLogFields.of(log.atWarn(), run.job).log("job {} attempt {}: the handler returned {} ms after it"
                            + " started, long after its timeout; what it returned is discarded (the timeout failure stands)",
                            run.job.id(), run.job.attempts(), run.elapsed(clock).toMillis());
                }
                return; // abandoned at shutdown (the discard is reported) or released after its timeout
            }
            run.cancelTimeout();
            // An interrupt sent before finish() (a timeout's, a cancel's) may still be pending; none comes after it
            // (Run#interruptIfIn), so clearing it here keeps every interrupt away from the store call.
            Thread.interrupted();
            // The slot is given back once the outcome is handed over: the claim that refills it carries the
            // outcome (one commit for both), and does not wait for this outcome's own commit.
            recorder.record(run, outcome, () -> runs.handlerReturned(run));
        } catch (Throwable t) {
            errors.unexpected("job thread", t); // the thread's name says which job
        } finally {
            // A released run's slot was given back by releaseOverrun, which owns the run from then on.
            if (run.phase.get() != Run.Phase.RELEASED) runs.end(run);
        }
    }

    private Outcome invoke(Run run) {
        if (run.unrunnable.isPresent()) return run.unrunnable.get();
        Job job = run.job;
        JobHandler handler = handlers.get(job.task());
        if (handler == null) {
            // WARN, not the INFO of an ordinary retry: a deploy left this queue's workers without the handler
            JobLogFields.of(log.atWarn(), job).log("job {} attempt {}/{}: no handler for task '{}' on worker {} (it runs:"
                    + " {}); the attempt fails and is retried. Every worker serving queue {} needs this task's handler",
                    job.id(), job.attempts(), job.maxAttempts(), job.task(), worker, handlers.keySet(), job.queue());
            return new Outcome.Failed("no handler for task '" + job.task() + "' on worker " + worker
                    + " (it runs: " + handlers.keySet() + ")", FailureKind.ERROR, null);
        }
        try {
            Optional<JsonNode> result = handler.handle(run.context);
            if (result == null || result.isEmpty()) return new Outcome.Succeeded(Optional.empty());
            return new Outcome.Succeeded(Optional.of(mapper.writeValueAsString(result.get())));
        } catch (Throwable t) {
            errors.fatalIfSo("handler", t); // the thread's name says which job
            Optional<PermanentJobFailure> permanent = Failures.findPermanent(t);
            if (permanent.isPresent()) return new Outcome.Failed(permanent.get().getMessage(), FailureKind.PERMANENT, t);
            return new Outcome.Failed(Failures.describe(t), FailureKind.ERROR, t);
        }
    }

    private void timeOut(Run run, Duration timeout) {
        String reason = "task '" + run.job.task() + "' timed out after " + timeout.toMillis() + " ms (job "
                + run.job.id() + ", attempt " + run.job.attempts() + " of " + run.job.maxAttempts() + ")";
        // Set before the swap: a handler returning right after it records this reason, not a bare "timed out".
        run.timeoutReason = reason;
        if (!run.phase.compareAndSet(Run.Phase.RUNNING, Run.Phase.TIMED_OUT)) return;
        run.context.cancel(reason);
        run.interruptIfIn(Run.Phase.TIMED_OUT);
        Duration grace = timeoutGrace(timeout);
        JobLogFields.of(log.atInfo(), run.job).log("job {} {}; its thread was interrupted and has {} ms to return",
                run.job.id(), reason, grace.toMillis());
        run.timeout = schedule(() -> releaseOverrun(run, grace), grace);
    }

    /**
     * How long a timed-out handler has to react to its interrupt before its slot is taken back: as long
     * again as its timeout, at most {@link Worker#TIMEOUT_GRACE_CAP}.
     */
    static Duration timeoutGrace(Duration timeout) {
        return timeout.compareTo(Worker.TIMEOUT_GRACE_CAP) <= 0 ? timeout : Worker.TIMEOUT_GRACE_CAP;
    }

    /**
     * The handler ignored its timeout's interrupt for the whole grace. Waiting longer would let one hung
     * handler hold a slot, and keep its lease alive by heartbeats, forever. So the run is cut loose: the
     * timeout failure is recorded now (retryable, fenced like any outcome), then the run leaves the
     * heartbeat and its slot is given back. Its thread cannot be stopped and may run on; {@link #execute}
     * discards whatever it returns. Runs on its own virtual thread: the write may take seconds and must not
     * hold up the timer, which times every other run.
     */
    private void releaseOverrun(Run run, Duration grace) {
        if (!run.phase.compareAndSet(Run.Phase.TIMED_OUT, Run.Phase.RELEASED)) return; // returned meanwhile, or abandoned
        String error = run.timeoutReason + "; the handler ignored the interrupt for " + grace.toMillis()
                + " ms, so its slot was freed and whatever it returns later is discarded";
        JobLogFields.of(log.atWarn(), run.job).log("job {} attempt {}: {}; its thread ({}) may still be running",
                run.job.id(), run.job.attempts(), error, run.thread);
        Thread.ofVirtual().name("jobq-timed-out-" + run.job.id() + "#" + run.job.attempts()).start(() -> {
            try {
                recorder.record(run, new Outcome.Failed(error, FailureKind.TIMEOUT, null), () -> {});
            } catch (Throwable t) {
                errors.unexpected("release of a timed-out run", t);
            } finally {
                runs.end(run);
            }
        });
    }

    /**
     * Shutdown's grace period is over: every run still going is cancelled, its thread interrupted and its
     * outcome discarded; nothing is written for it, so its lease lapses and maintenance reaps it.
     */
    void abandonAll(String why) {
        for (Run run : runs.all()) {
            Run.Phase from = run.phase.get();
            if ((from == Run.Phase.RUNNING || from == Run.Phase.TIMED_OUT) && run.phase.compareAndSet(from, Run.Phase.ABANDONED)) {
                run.context.cancel(why);
                run.thread.interrupt();
                recorder.discard(run, DiscardReason.SHUTDOWN, "the grace period ended first; it is left to its lease");
            }
        }
    }

    /** Schedules {@code task} on the timer; null once the timer has stopped with the worker (close() abandons the run anyway). */
    private java.util.concurrent.Future<?> schedule(Runnable task, Duration delay) {
        try {
            return timer.schedule(task, delay.toNanos(), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            return null;
        }
    }
}
