package io.jobq.application.worker;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.jobq.application.port.JobStore;
import io.jobq.application.port.WakeupChannel;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.lease.FencingToken;
import io.jobq.domain.lease.WorkerId;
import io.jobq.domain.retry.RetryPolicy;
import java.net.InetAddress;
import java.time.Duration;
import java.time.InstantSource;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One worker process's runtime: claims jobs from a {@link JobStore}, runs them, keeps their leases
 * alive, records their outcomes, and does its share of maintenance. It starts and stops these roles,
 * each a class of its own (as River splits producer, executor, completer and maintenance services):
 *
 * <table>
 *   <caption>The roles and their threads</caption>
 *   <tr><th>role</th><th>thread</th><th>does</th></tr>
 *   <tr><td>{@link ClaimLoop}</td><td>one platform thread</td><td>claims up to the free slots (plus
 *       {@link WorkerSettings#prefetch()}) in one commit that also writes the outcomes waiting (unless an
 *       {@link OutcomeWriter} writes them), and adopts
 *       a claim whose answer was lost</td></tr>
 *   <tr><td>{@link ClaimedAhead}</td><td>the thread that frees a slot</td><td>holds claimed jobs until a
 *       slot frees and starts them; gives back those still waiting at shutdown</td></tr>
 *   <tr><td>{@link JobRunner}</td><td>a virtual thread per run, at most {@link WorkerSettings#concurrency()}</td>
 *       <td>runs the handler under its task's timeout</td></tr>
 *   <tr><td>{@link OutcomeRecorder}</td><td>the run's thread</td><td>writes done, or failed as the worker's
 *       {@link RetryPolicy} decides; fenced, with retries</td></tr>
 *   <tr><td>{@link OutcomeBatcher}</td><td>the run's, the claim loop's (or the writer's), and the timer</td><td>holds the outcomes
 *       runs hand over until the claim loop writes them with its next claim (group commit); each run waits for its
 *       own; the timer hands back those the claim loop leaves waiting too long</td></tr>
 *   <tr><td>{@link OutcomeWriter}</td><td>one platform thread, where the store's claims cannot carry outcomes</td>
 *       <td>writes the outcomes handed over, all those waiting in one statement, beside the claims</td></tr>
 *   <tr><td>{@link LeaseKeeper}</td><td>one platform thread, and the timer</td><td>heartbeats every lease in hand in
 *       one statement; flags leases in jeopardy</td></tr>
 *   <tr><td>{@link Maintainer}</td><td>one platform thread, if enabled</td><td>when it gets the queue's upkeep
 *       turn (about one pass a period across all workers): reaps expired leases, promotes due jobs, vacuums
 *       where autovacuum does not</td></tr>
 *   <tr><td>{@link ScheduleFirer}</td><td>one platform thread, if maintenance is enabled</td><td>fires cron
 *       schedules' due ticks (one job per tick across every worker)</td></tr>
 * </table>
 *
 * <h2>Store outages and errors</h2>
 * Any exception from a store call is logged and reported to {@link WorkerListener#storeError}; the claim
 * loop and heartbeat back off exponentially (100 ms doubling to {@link WorkerSettings#outageBackoffCap()},
 * 5 s by default) and carry on; maintenance retries next period. No throwable ends a worker thread: an
 * {@link Error} from a handler fails that run; one for which {@link FatalErrorPolicy#isFatal} holds
 * (OutOfMemoryError, InternalError, UnknownError, also as a cause) goes to the {@link FatalErrorPolicy}
 * first, whose default halts the JVM so that its supervisor restarts it.
 *
 * <h2>Shutdown</h2>
 * {@link #close()} stops claiming at once, gives jobs claimed ahead and still waiting for a slot back to
 * the store unrun ({@link JobStore#release}), but keeps heartbeating the runs in hand (so a long job is
 * not reaped while it finishes), waits up to {@link WorkerSettings#gracePeriod()} for them to finish
 * and record their outcomes, then stops heartbeats and maintenance and returns. Runs still going at
 * the deadline are <em>left to their leases</em>: their contexts are cancelled, their threads
 * interrupted, their outcomes discarded ({@link DiscardReason#SHUTDOWN}); nothing is written for them,
 * so the lease lapses and any worker's maintenance reaps them (counting an attempt). Releasing them
 * to queued instead would need a new store write racing the still-running handler; the lease already
 * gives the same end state safely. A run that had already returned and is writing its outcome at the
 * deadline finishes that write (at most {@value #WRITE_ATTEMPTS} tries). {@code close()} returns
 * within the grace period plus about 1 s.
 *
 * <p>The worker owns the {@link WakeupChannel} it is given: it starts it and closes it.
 */
public final class Worker implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Worker.class);

    /** How many times an outcome write (complete/fail) is tried before the run is left to its lease. */
    public static final int WRITE_ATTEMPTS = 3;
    /** How long close() waits, after the grace period, for the background threads to stop. */
    static final Duration STOP_MARGIN = Duration.ofSeconds(1);
    /**
     * The longest a timed-out handler may take to return after its interrupt (shorter for timeouts
     * shorter than this: as long again as the timeout) before its run is released: 5 s.
     */
    public static final Duration TIMEOUT_GRACE_CAP = Duration.ofSeconds(5);

    private enum Lifecycle { NEW, RUNNING, STOPPING, CLOSED }

    private final Optional<WakeupChannel> wakeups;
    /** For announcing this worker ({@link #announce}); the roles hold their own references. */
    private final JobStore store;
    private final Set<TaskName> tasks;
    private final WorkerSettings settings;
    private final WorkerId id;
    private final WorkerListener listener;
    private final ErrorReporter errors;

    private final WakeSignal claimSignal = new WakeSignal();
    private final RunsInHand runs;
    private final StopLatch claimingStopped = new StopLatch();
    private final StopLatch backgroundStopped = new StopLatch();
    private final CountDownLatch terminated = new CountDownLatch(1);
    private final AtomicReference<Lifecycle> lifecycle = new AtomicReference<>(Lifecycle.NEW);
    private volatile boolean abandoning;

    private final JobRunner runner;
    private final ClaimedAhead ahead;
    private final ClaimLoop claimLoop;
    private final LeaseKeeper leaseKeeper;
    private final Maintainer maintainer;
    private final ScheduleFirer scheduleFirer;
    private final OutcomeBatcher outcomes;
    /** Present where the store's claims cannot carry outcomes: it writes them instead of the claim loop. */
    private final Optional<OutcomeWriter> outcomeWriter;
    private volatile Thread claimThread;
    private volatile Thread outcomeThread;
    private volatile Thread heartbeatThread;
    private volatile Thread maintenanceThread;
    private volatile Thread scheduleThread;
    private volatile WorkerTimer timer;

    private Worker(Builder b) {
        JobStore store = b.store;
        this.store = store;
        this.wakeups = Optional.ofNullable(b.wakeups);
        var handlers = b.handlers.snapshot();
        this.tasks = handlers.keySet();
        this.settings = b.settings;
        this.id = b.settings.workerId().orElseGet(Worker::defaultWorkerId);
        this.listener = b.listener;
        this.errors = new ErrorReporter(id, listener, b.fatalErrors);
        this.runs = new RunsInHand(settings.concurrency(), settings.outcomeBatchSize(), claimSignal);
        // Asked once: whoever takes the outcomes (the claim loop, or a writer of their own: see OutcomeWriter)
        // is the one the hand-overs wake, and the claim loop must know whether it is that one.
        boolean claimsCarryOutcomes = store.claimsCarryOutcomes();
        WakeSignal handedOver = claimsCarryOutcomes ? claimSignal : new WakeSignal();
        this.outcomes = new OutcomeBatcher(store, settings.outcomeBatchSize(), waitForClaimLoop(settings), handedOver);
        this.outcomeWriter = claimsCarryOutcomes ? Optional.empty() : Optional.of(new OutcomeWriter(outcomes, handedOver, errors));
        OutcomeRecorder recorder = new OutcomeRecorder(outcomes, b.retryPolicy, listener, errors, b.clock, () -> abandoning, runs,
                settings.lease());
        this.runner = new JobRunner(id, handlers, settings, runs, recorder, b.mapper, b.clock, listener, errors,
                () -> abandoning);
        this.ahead = new ClaimedAhead(runs, runner, settings, listener, errors);
        runs.onSlotFreed(ahead::dispatch);
        this.claimLoop = new ClaimLoop(store, id, settings, runs, ahead, outcomes, claimsCarryOutcomes, claimSignal, listener,
                errors, claimingStopped);
        this.leaseKeeper = new LeaseKeeper(store, settings, runs, ahead, listener, errors, backgroundStopped, this::announce);
        this.maintainer = new Maintainer(store, b.retryPolicy, id, settings, leaseKeeper, claimSignal, listener, errors,
                backgroundStopped);
        this.scheduleFirer = new ScheduleFirer(store, id, claimSignal, errors, backgroundStopped, OutageBackoff.of(settings));
    }

    /**
     * Starts building a worker over {@code store} running {@code handlers} (a snapshot is taken at
     * {@link Builder#build()}).
     */
    public static Builder builder(JobStore store, HandlerRegistry handlers) {
        return new Builder(store, handlers);
    }

    /** Builds a {@link Worker}; every setter is optional except as noted. */
    public static final class Builder {
        private final JobStore store;
        private final HandlerRegistry handlers;
        private WakeupChannel wakeups;
        private WorkerSettings settings = WorkerSettings.DEFAULTS;
        private InstantSource clock = InstantSource.system();
        private WorkerListener listener = WorkerListener.NONE;
        private ObjectMapper mapper = defaultMapper();
        private FatalErrorPolicy fatalErrors = FatalErrorPolicy.HALT;
        private RetryPolicy retryPolicy = RetryPolicy.defaults();

        private Builder(JobStore store, HandlerRegistry handlers) {
            this.store = Objects.requireNonNull(store, "store");
            this.handlers = Objects.requireNonNull(handlers, "handlers");
        }

        /** The wake-up source; required when {@link WorkerSettings#listen()} is true, ignored otherwise. */
        public Builder wakeups(WakeupChannel channel) {
            this.wakeups = Objects.requireNonNull(channel, "channel");
            return this;
        }

        /** Default: {@link WorkerSettings#DEFAULTS}. */
        public Builder settings(WorkerSettings value) {
            this.settings = Objects.requireNonNull(value, "settings");
            return this;
        }

        /**
         * The worker's clock, used only to time runs for logs and the listener; leases, run_at and
         * backoff follow the store's clock. Default: {@link InstantSource#system()}.
         */
        public Builder clock(InstantSource value) {
            this.clock = Objects.requireNonNull(value, "clock");
            return this;
        }

        /** Default: {@link WorkerListener#NONE}. */
        public Builder listener(WorkerListener value) {
            this.listener = Objects.requireNonNull(value, "listener");
            return this;
        }

        /**
         * Parses payloads, binds them in {@link JobContext#payloadAs} and writes results. Default: a
         * mapper that ignores unknown properties (so producers can add a field before every consumer knows
         * it) and refuses nulls for primitives.
         */
        public Builder objectMapper(ObjectMapper value) {
            this.mapper = Objects.requireNonNull(value, "objectMapper");
            return this;
        }

        /**
         * What to do when a thread of the worker catches an error that leaves the JVM unusable (see
         * {@link FatalErrorPolicy}). Default: {@link FatalErrorPolicy#HALT}, exit status 3.
         */
        public Builder fatalErrors(FatalErrorPolicy value) {
            this.fatalErrors = Objects.requireNonNull(value, "fatalErrors");
            return this;
        }

        /**
         * Decides retry-after-delay or dead after every failed attempt this worker records, and for every
         * expired lease its maintenance reaps. Default: {@link RetryPolicy#defaults()} (backoff base 1 s,
         * cap 10 min, full jitter).
         */
        public Builder retryPolicy(RetryPolicy value) {
            this.retryPolicy = Objects.requireNonNull(value, "retryPolicy");
            return this;
        }

        /** @throws IllegalArgumentException if listening is enabled but no wake-up channel was given */
        public Worker build() {
            if (settings.listen() && wakeups == null) {
                throw new IllegalArgumentException(
                        "listen is enabled but no WakeupChannel was given; pass one or build the settings with listen(false)");
            }
            return new Worker(this);
        }
    }

    /**
     * Unknown properties are ignored: in a rolling deploy producers send a new field before every worker
     * has the handler that reads it, and refusing it would kill those jobs permanently. A worker that wants
     * misspelt fields refused passes a mapper with that feature enabled to {@link Builder#objectMapper}.
     */
    static ObjectMapper defaultMapper() {
        return JsonMapper.builder()
                .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
                .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
                .build();
    }

    /** This worker's id: the lease owner in every claim it makes. */
    public WorkerId id() {
        return id;
    }

    /** The settings in force. */
    public WorkerSettings settings() {
        return settings;
    }

    /**
     * Tells the store this worker is alive and what it serves and runs (GET /workers; the enqueue warning
     * for a task nobody runs). A failure is reported and otherwise ignored: it is retried next period.
     */
    private void announce() {
        try {
            store.workerAlive(id, settings.queues(), tasks, settings.effectiveHeartbeatInterval());
        } catch (Throwable e) {
            errors.fatalIfSo("store call", e);
            errors.storeError("announce worker", e, settings.effectiveHeartbeatInterval());
        }
    }

    /**
     * Tells the store this worker is gone, waiting at most {@link #STOP_MARGIN}: in an outage the call
     * could wait for a connection far longer than close() may take. A worker that cannot say so drops out
     * of the live list after three heartbeat periods anyway.
     */
    private void sayGone() {
        Thread t = Thread.ofVirtual().name("jobq-gone-" + id).start(() -> {
            try {
                store.workerGone(id);
            } catch (Throwable e) {
                errors.fatalIfSo("store call", e);
            }
        });
        joinQuietly(t, STOP_MARGIN);
    }

    /** Where the worker is in its life: {@code new}, {@code running}, {@code stopping} or {@code closed}. */
    public String status() {
        return lifecycle.get().name().toLowerCase(java.util.Locale.ROOT);
    }

    /** How many runs this worker holds right now (running or recording their outcome). */
    public int inHandCount() {
        return runs.size();
    }

    /**
     * Starts the claim loop, heartbeat, maintenance and (if enabled) the wake-up listener; returns at once.
     *
     * @throws IllegalStateException if the worker was already started or closed
     * @throws RuntimeException whatever {@link WakeupChannel#start} throws; the worker is then closed
     */
    public void start() {
        if (!lifecycle.compareAndSet(Lifecycle.NEW, Lifecycle.RUNNING)) {
            throw new IllegalStateException("worker " + id + " was already started (" + lifecycle.get() + ")");
        }
        if (settings.listen()) {
            try {
                // Before the claim loop's first pass, so a job enqueued meanwhile is either seen by
                // that pass or wakes the loop afterwards.
                wakeups.orElseThrow().start(Set.copyOf(settings.queues()), claimSignal::signal);
            } catch (RuntimeException e) {
                lifecycle.set(Lifecycle.CLOSED);
                terminated.countDown();
                throw e;
            }
        }
        timer = new WorkerTimer(Thread.ofPlatform().daemon(true).name("jobq-timeout-" + id).factory(),
                e -> errors.unexpected("timer task", e));
        runner.useTimer(timer);
        long checkEvery = Math.max(1, settings.effectiveHeartbeatInterval().toMillis());
        timer.scheduleWithFixedDelay(leaseKeeper::flagLeasesInJeopardy, checkEvery, checkEvery, TimeUnit.MILLISECONDS);
        heartbeatThread = Thread.ofPlatform().daemon(true).name("jobq-heartbeat-" + id).start(() -> errors.keepRunning(
                "heartbeat loop", leaseKeeper::heartbeatLoop, backgroundStopped, OutageBackoff.of(settings)));
        if (settings.maintenanceEnabled()) {
            maintenanceThread = Thread.ofPlatform().daemon(true).name("jobq-maintenance-" + id).start(() -> errors.keepRunning(
                    "maintenance loop", maintainer::loop, backgroundStopped, OutageBackoff.of(settings)));
            scheduleThread = Thread.ofPlatform().daemon(true).name("jobq-schedules-" + id).start(() -> errors.keepRunning(
                    "schedule loop", scheduleFirer::loop, backgroundStopped, OutageBackoff.of(settings)));
        }
        // Outcomes wait for the claim loop's next claim, or, where a claim cannot carry them, for the writer.
        outcomes.startRiding(timer);
        outcomeWriter.ifPresent(w -> outcomeThread = Thread.ofPlatform().daemon(true).name("jobq-outcomes-" + id)
                .start(() -> errors.keepRunning("outcome writer", w::loop, backgroundStopped, OutageBackoff.of(settings))));
        // at once rather than at the first heartbeat period, and off this thread: start() must not wait on the store
        Thread.ofVirtual().name("jobq-announce-" + id).start(this::announce);
        claimThread = Thread.ofPlatform().daemon(true).name("jobq-claim-" + id).start(claimLoop::loop);
        log.atInfo().addKeyValue("worker", id).addKeyValue("queues", settings.queues())
                .addKeyValue("concurrency", settings.concurrency())
                .log("worker {} started: queues={}, concurrency={}, batch={}, lease={}, heartbeat={}, listen={}, tasks={}",
                        id, settings.queues(), settings.concurrency(), settings.claimBatchSize(), settings.lease(),
                        settings.effectiveHeartbeatInterval(), settings.listen(), tasks);
    }

    /**
     * A thread, not yet started, that calls {@link #close()}: pass it to
     * {@link Runtime#addShutdownHook(Thread)} so SIGTERM drains in-hand jobs within the grace period.
     */
    public Thread shutdownHook() {
        return Thread.ofPlatform().name("jobq-shutdown-" + id).unstarted(this::close);
    }

    /**
     * Graceful shutdown, as described on the class: stops claiming at once, keeps heartbeating and
     * waits up to the grace period for in-hand runs, leaves the rest to their leases, then stops.
     * Idempotent: a second (or concurrent) call waits for the first to finish. A never-started worker
     * just closes its wake-up channel. If the calling thread is interrupted, in-hand runs are
     * abandoned at once. Returns within the grace period plus about {@link #STOP_MARGIN}.
     */
    @Override
    public void close() {
        Lifecycle previous = lifecycle.getAndUpdate(s -> switch (s) {
            case NEW -> Lifecycle.CLOSED;
            case RUNNING -> Lifecycle.STOPPING;
            default -> s;
        });
        if (previous == Lifecycle.NEW) {
            wakeups.ifPresent(this::closeQuietly);
            terminated.countDown();
            return;
        }
        if (previous != Lifecycle.RUNNING) {
            awaitQuietly(terminated, settings.gracePeriod().plus(STOP_MARGIN).plus(STOP_MARGIN));
            return;
        }
        long deadline = System.nanoTime() + settings.gracePeriod().toNanos();
        claimingStopped.stop();
        outcomes.stopRiding(); // the runs in hand write their own outcomes from here on
        outcomeWriter.ifPresent(OutcomeWriter::stop); // it finishes a write under way, no more
        // Jobs waiting for a slot go back at once (not after the runs in hand, nor abandoned with them).
        giveBackClaimedAhead();
        boolean interrupted = false;
        // Whatever is thrown while draining (even an Error from a log call), the worker still ends up
        // closed: claiming, heartbeats, maintenance and the timer stopped, and later close() calls return.
        try {
            log.atInfo().addKeyValue("worker", id).addKeyValue("inHand", runs.size())
                    .log("worker {} stopping: no more claims; waiting up to {} for {} job(s) in hand",
                            id, settings.gracePeriod(), runs.size());
            claimSignal.signal();
            wakeups.ifPresent(this::closeQuietly);
            claimThread.join(remaining(deadline));
            if (outcomeThread != null) outcomeThread.join(remaining(deadline)); // stopped above: a write under way, if any
            giveBackClaimedAhead(); // what a claim in flight brought
            // All slots free means every run has finished and recorded (or discarded) its outcome.
            boolean drained = runs.awaitAllFree(remaining(deadline));
            abandoning = true; // from here on no run starts, even from a claim still stuck in the store
            if (!drained) abandonInHand();
        } catch (InterruptedException e) {
            interrupted = true;
            abandoning = true;
            abandonInHand();
        } catch (Throwable t) {
            abandoning = true;
            errors.unexpected("close", t);
            try {
                abandonInHand(); // their leases would lapse under them once heartbeats stop
            } catch (Throwable again) {
                errors.unexpected("close", again);
            }
        } finally {
            giveBackClaimedAhead(); // also after an interrupt or a failure above: nothing when already given back
            backgroundStopped.stop();
            leaseKeeper.beatSoon(); // wakes the heartbeat thread, so it sees the stop now
            joinQuietly(heartbeatThread, STOP_MARGIN);
            joinQuietly(maintenanceThread, STOP_MARGIN);
            joinQuietly(scheduleThread, STOP_MARGIN);
            timer.shutdownNow();
            sayGone();
            lifecycle.set(Lifecycle.CLOSED);
            try {
                log.atInfo().addKeyValue("worker", id).log("worker {} stopped", id);
            } catch (Throwable t) {
                // the state above is what matters; a listener still hears of the stop
            }
            errors.notify(listener::stopped);
            terminated.countDown();
        }
        if (interrupted) Thread.currentThread().interrupt();
    }

    /**
     * Jobs claimed ahead ({@link WorkerSettings#prefetch()}) that never got a slot go back to the store unrun,
     * for any worker to claim at once. If that fails they are left to their leases, as after a crash.
     */
    private void giveBackClaimedAhead() {
        List<FencingToken> unstarted = ahead.takeAll();
        if (unstarted.isEmpty()) return;
        try {
            int released = store.release(unstarted);
            log.atInfo().addKeyValue("worker", id).log("worker {}: gave back {} claimed job(s) it had not started",
                    id, released);
            errors.notify(() -> listener.released(unstarted));
        } catch (Throwable e) {
            errors.fatalIfSo("store call", e);
            log.atWarn().addKeyValue("worker", id).log("worker {}: could not give back {} claimed job(s) it had not"
                    + " started; they are left to their leases: {}", id, unstarted.size(), e.toString());
        }
    }

    /**
     * How long an outcome waits for the claim loop to carry it before its run writes it alone: twice the fill
     * wait plus 100 ms, far more than a claim loop that is not stuck in the store takes to come round. The
     * {@link OutcomeWriter} gets the same: it never waits to fill a batch, so a write of its own slower than
     * this (a store in trouble) hands what queued behind it back to the runs, which write one by one, as
     * they did before it.
     */
    static Duration waitForClaimLoop(WorkerSettings settings) {
        return settings.batchFillWait().multipliedBy(2).plusMillis(100);
    }

    /** How many handed-over outcomes wait for their taker (for tests). */
    int outcomesWaiting() {
        return outcomes.waiting();
    }

    private void abandonInHand() {
        runner.abandonAll("worker " + id + " shut down: grace period of " + settings.gracePeriod().toMillis() + " ms elapsed");
    }

    private void closeQuietly(WakeupChannel channel) {
        try {
            channel.close();
        } catch (Throwable e) {
            errors.unexpected("closing the wake-up channel", e);
        }
    }

    private static Duration remaining(long deadlineNanos) {
        return Duration.ofNanos(Math.max(0, deadlineNanos - System.nanoTime()));
    }

    private static void awaitQuietly(CountDownLatch latch, Duration timeout) {
        try {
            latch.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void joinQuietly(Thread thread, Duration timeout) {
        if (thread == null) return;
        try {
            thread.join(timeout);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** {@code <host>-<pid>-<4 hex digits>}, reduced to the characters a {@link WorkerId} accepts. */
    static WorkerId defaultWorkerId() {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (Exception e) {
            host = Optional.ofNullable(System.getenv("HOSTNAME")).orElse("worker");
        }
        host = host.replaceAll("[^A-Za-z0-9_.:-]", "_");
        if (host.isEmpty()) host = "worker";
        if (host.length() > 80) host = host.substring(0, 80);
        long pid = ProcessHandle.current().pid();
        String random = HexFormat.of().toHexDigits((short) ThreadLocalRandom.current().nextInt());
        return WorkerId.of(host + "-" + pid + "-" + random);
    }
}
