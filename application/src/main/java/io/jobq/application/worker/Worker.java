package io.jobq.application.worker;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.MissingNode;
import io.jobq.application.port.ClaimRequest;
import io.jobq.application.port.ExpiredLeaseDecider;
import io.jobq.application.port.FencedWrite;
import io.jobq.application.port.JobQueueException;
import io.jobq.application.port.JobStore;
import io.jobq.application.port.WakeupChannel;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobState;
import io.jobq.domain.job.StoredText;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.lease.FencingToken;
import io.jobq.domain.lease.WorkerId;
import io.jobq.domain.retry.FailureKind;
import io.jobq.domain.retry.RetryDecision;
import io.jobq.domain.retry.RetryPolicy;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.spi.LoggingEventBuilder;

/**
 * One worker process's runtime: claims jobs from a {@link JobStore}, runs them, keeps their leases
 * alive, records their outcomes, and does its share of maintenance.
 *
 * <h2>Threads</h2>
 * <ul>
 *   <li><b>claim loop</b> (one platform thread): whenever execution slots are free, claims
 *       {@code min(free slots, claimBatchSize)} jobs in ONE {@link JobStore#claim} call and starts each
 *       on a virtual thread. When the queues are drained it sleeps until the first of: a wake-up from
 *       the {@link WakeupChannel}, a slot freeing, a maintenance pass promoting jobs, or the fallback
 *       poll ({@link WorkerSettings#pollInterval()}).
 *   <li><b>job threads</b> (one virtual thread per run, at most {@link WorkerSettings#concurrency()}
 *       at once): run the {@link JobHandler} and record the outcome.
 *   <li><b>heartbeat</b> (one platform thread): every {@link WorkerSettings#effectiveHeartbeatInterval()},
 *       extends the leases of ALL runs in hand in ONE {@link JobStore#heartbeat} call. A run whose lease
 *       was lost has its {@link JobContext} cancelled and its outcome discarded, never recorded.
 *   <li><b>maintenance</b> (one platform thread, if enabled): about every
 *       {@link WorkerSettings#maintenanceInterval()} (±20% jitter), {@link JobStore#reapExpiredLeases}
 *       and {@link JobStore#promoteDue}, each repeated while a full batch came back, then
 *       {@link JobStore#vacuumIfNeeded} (the store decides, rate-limited, whether cleanup is due).
 * </ul>
 *
 * <h2>Outcomes</h2>
 * A handler's return is recorded with {@link JobStore#complete}. A failure is recorded with
 * {@link JobStore#fail} and the {@link RetryDecision} the worker's {@link RetryPolicy} makes for its
 * {@link FailureKind}: {@code PERMANENT} for a {@link PermanentJobFailure} (also when found in the cause
 * chain, e.g. wrapped by a {@code CompletionException}) and a payload that is not valid JSON;
 * {@code TIMEOUT} for a timeout; {@code ERROR} for any other exception and for a task with no handler on
 * this worker: that one fails <em>retryably</em>, naming the task and this worker, because during a
 * rolling deploy another worker may already know the task, and {@code max_attempts} still bounds the
 * retries. Maintenance reaps expired leases with the same policy ({@code LEASE_EXPIRED}). Error texts
 * go through {@link StoredText#sanitize} first, the one sanitising path the stores use too. An outcome write that throws is tried
 * {@value #WRITE_ATTEMPTS} times in all (pauses 200 ms, 400 ms) and then left to the
 * lease: the job is never reported done unless the store said so.
 *
 * <h2>Timeouts</h2>
 * A run gets {@link WorkerSettings#timeoutFor} its task: the task's own timeout, else the default one
 * (15 min in {@link WorkerSettings#DEFAULTS}). When it fires, the run's {@link JobContext} is cancelled
 * and its thread interrupted; whatever the handler then returns, the run fails retryably as timed out.
 * A handler that ignores the interrupt gets a grace of as long again as its timeout, at most
 * {@link #TIMEOUT_GRACE_CAP} (5 s). Then the timeout failure is recorded without waiting for it (fenced
 * like any outcome), the run leaves the heartbeat and its slot is given back, so a hung handler costs
 * the worker none of its concurrency and keeps no lease alive. Its thread, which Java cannot stop, may
 * run on; what it returns is discarded, with a WARN.
 *
 * <h2>Store outages</h2>
 * Any exception from a store call is logged and reported to {@link WorkerListener#storeError}; the
 * claim loop and heartbeat back off exponentially (100 ms doubling to
 * {@link WorkerSettings#outageBackoffCap()}, 5 s by default) and carry on; maintenance retries next
 * period. No store failure stops the worker.
 *
 * <h2>Errors</h2>
 * No throwable ends a worker thread. An {@link Error} from a handler fails that run retryably, naming
 * the error; from a store call or a listener it is handled like an exception there. An error for
 * which {@link FatalErrorPolicy#isFatal} holds (OutOfMemoryError, InternalError, UnknownError, also as
 * a cause) goes to the {@link FatalErrorPolicy} first, whose default halts the JVM so that its
 * supervisor restarts it; a policy that returns lets the worker go on as after any other error.
 *
 * <h2>Shutdown</h2>
 * {@link #close()} stops claiming at once but keeps heartbeating the runs in hand (so a long job is
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
    /** The pause before the second outcome write; it doubles before each further one. */
    static final Duration WRITE_RETRY_PAUSE = Duration.ofMillis(200);
    /** How long close() waits, after the grace period, for the background threads to stop. */
    static final Duration STOP_MARGIN = Duration.ofSeconds(1);
    /**
     * The longest a timed-out handler may take to return after its interrupt (shorter for timeouts
     * shorter than this: as long again as the timeout) before its run is released: 5 s.
     */
    public static final Duration TIMEOUT_GRACE_CAP = Duration.ofSeconds(5);
    /** Most consecutive full batches one maintenance pass runs before yielding to the next period. */
    static final int MAX_MAINTENANCE_ROUNDS = 100;

    private enum Lifecycle { NEW, RUNNING, STOPPING, CLOSED }

    private final JobStore store;
    private final Optional<WakeupChannel> wakeups;
    private final Map<TaskName, JobHandler> handlers;
    private final WorkerSettings settings;
    private final WorkerId id;
    private final InstantSource clock;
    private final WorkerListener listener;
    private final ObjectMapper mapper;
    private final FatalErrorPolicy fatalErrors;
    private final RetryPolicy retryPolicy;

    private final Semaphore slots;
    private final Signal claimSignal = new Signal();
    private final ConcurrentMap<FencingToken, Run> inHand = new ConcurrentHashMap<>();
    private final CountDownLatch claimingStopped = new CountDownLatch(1);
    private final CountDownLatch backgroundStopped = new CountDownLatch(1);
    private final CountDownLatch terminated = new CountDownLatch(1);
    private final AtomicReference<Lifecycle> lifecycle = new AtomicReference<>(Lifecycle.NEW);
    private volatile boolean abandoning;
    private volatile Thread claimThread;
    private volatile Thread heartbeatThread;
    private volatile Thread maintenanceThread;
    private volatile ScheduledExecutorService timer;

    private Worker(Builder b) {
        this.store = b.store;
        this.wakeups = Optional.ofNullable(b.wakeups);
        this.handlers = b.handlers.snapshot();
        this.settings = b.settings;
        this.id = b.settings.workerId().orElseGet(Worker::defaultWorkerId);
        this.clock = b.clock;
        this.listener = b.listener;
        this.mapper = b.mapper;
        this.fatalErrors = b.fatalErrors;
        this.retryPolicy = b.retryPolicy;
        this.slots = new Semaphore(settings.concurrency());
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
         * mapper that refuses unknown properties and nulls for primitives.
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
                        "listen is enabled but no WakeupChannel was given; pass one or use settings.withListen(false)");
            }
            return new Worker(this);
        }
    }

    static ObjectMapper defaultMapper() {
        return JsonMapper.builder()
                .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
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

    /** How many runs this worker holds right now (running or recording their outcome). */
    public int inHandCount() {
        return inHand.size();
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
                e -> unexpected("timer task", e));
        // Lease jeopardy is also checked on this clock, not only when a heartbeat fails: a heartbeat
        // that hangs (a dropped connection waits for the socket timeout) must not hide a lapsed lease.
        long checkEvery = Math.max(1, settings.effectiveHeartbeatInterval().toMillis());
        timer.scheduleWithFixedDelay(this::flagLeasesInJeopardy, checkEvery, checkEvery, TimeUnit.MILLISECONDS);
        heartbeatThread = Thread.ofPlatform().daemon(true).name("jobq-heartbeat-" + id)
                .start(() -> keepRunning("heartbeat loop", this::heartbeatLoop));
        if (settings.maintenanceEnabled()) {
            maintenanceThread = Thread.ofPlatform().daemon(true).name("jobq-maintenance-" + id)
                    .start(() -> keepRunning("maintenance loop", this::maintenanceLoop));
        }
        claimThread = Thread.ofPlatform().daemon(true).name("jobq-claim-" + id).start(this::claimLoop);
        log.atInfo().addKeyValue("worker", id).addKeyValue("queues", settings.queues())
                .addKeyValue("concurrency", settings.concurrency())
                .log("worker {} started: queues={}, concurrency={}, batch={}, lease={}, heartbeat={}, listen={}, tasks={}",
                        id, settings.queues(), settings.concurrency(), settings.claimBatchSize(), settings.lease(),
                        settings.effectiveHeartbeatInterval(), settings.listen(), handlers.keySet());
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
        claimingStopped.countDown();
        boolean interrupted = false;
        // Whatever is thrown while draining (even an Error from a log call), the worker still ends up
        // closed: claiming, heartbeats, maintenance and the timer stopped, and later close() calls return.
        try {
            log.atInfo().addKeyValue("worker", id).addKeyValue("inHand", inHand.size())
                    .log("worker {} stopping: no more claims; waiting up to {} for {} job(s) in hand",
                            id, settings.gracePeriod(), inHand.size());
            claimSignal.signal();
            wakeups.ifPresent(this::closeQuietly);
            claimThread.join(remaining(deadline));
            // All permits back means every run has finished and recorded (or discarded) its outcome.
            boolean drained = slots.tryAcquire(settings.concurrency(), remaining(deadline).toNanos(), TimeUnit.NANOSECONDS);
            abandoning = true; // from here on no run starts, even from a claim still stuck in the store
            if (!drained) abandonInHand();
        } catch (InterruptedException e) {
            interrupted = true;
            abandoning = true;
            abandonInHand();
        } catch (Throwable t) {
            abandoning = true;
            unexpected("close", t);
            try {
                abandonInHand(); // their leases would lapse under them once heartbeats stop
            } catch (Throwable again) {
                unexpected("close", again);
            }
        } finally {
            backgroundStopped.countDown();
            joinQuietly(heartbeatThread, STOP_MARGIN);
            joinQuietly(maintenanceThread, STOP_MARGIN);
            timer.shutdownNow();
            lifecycle.set(Lifecycle.CLOSED);
            try {
                log.atInfo().addKeyValue("worker", id).log("worker {} stopped", id);
            } catch (Throwable t) {
                // the state above is what matters; a listener still hears of the stop
            }
            notify(() -> listener.stopped());
            terminated.countDown();
        }
        if (interrupted) Thread.currentThread().interrupt();
    }

    // ---------------------------------------------------------------------------------------------
    // claim loop

    private void claimLoop() {
        Backoff outage = new Backoff(WorkerSettings.MIN_OUTAGE_BACKOFF, settings.outageBackoffCap());
        while (claimingStopped.getCount() > 0 && !Thread.currentThread().isInterrupted()) {
            try {
                claimOnce(outage);
            } catch (Throwable e) {
                // A bug here (or an Error) must not silently stop this worker from claiming: report it, pause, go on.
                unexpected("claim loop", e);
                if (awaitQuietly(claimingStopped, outage.next())) break;
            }
        }
    }

    /** One pass: claim up to the free slots and start the runs, or wait for news. */
    private void claimOnce(Backoff outage) {
        int free = slots.availablePermits();
        if (free == 0) {
            claimSignal.await(settings.pollInterval());
            return;
        }
        int want = Math.min(free, settings.claimBatchSize());
        List<Job> jobs;
        // Taken before the request: the store's lease starts later than this, so a deadline counted from
        // here can only be early, never late (see flagLeasesInJeopardy).
        long sentNanos = System.nanoTime();
        try {
            jobs = store.claim(new ClaimRequest(settings.queues(), id, want, settings.lease()));
            outage.reset();
        } catch (Throwable e) {
            if (FatalErrorPolicy.isFatal(e)) fatal("store call", e);
            Duration pause = outage.next();
            storeError("claim", e, pause);
            awaitQuietly(claimingStopped, pause);
            return;
        }
        if (!jobs.isEmpty()) {
            // Reported before the runs start, so a listener sees claimed before completed/failed.
            notify(() -> listener.claimed(List.copyOf(jobs)));
            for (Job job : jobs) launch(job, sentNanos);
        }
        // A short batch means the queues are drained: wait for news. A full one: go again at once.
        if (jobs.size() < want) claimSignal.await(settings.pollInterval());
    }

    private void launch(Job job, long claimSentNanos) {
        FencingToken token = job.fencingToken();
        // Only the claim loop takes permits and it asked for at most the free ones, so this fails only
        // once close() has taken them all: a claim still in flight when the grace period ended.
        if (abandoning || !slots.tryAcquire()) {
            log.atWarn().addKeyValue("job", job.id()).log(
                    "job {} was claimed while worker {} shut down; it is left to its lease", job.id(), id);
            notify(() -> listener.discarded(token, DiscardReason.SHUTDOWN));
            return;
        }
        try {
            startRun(job, token, claimSentNanos);
        } catch (Throwable e) {
            abortLaunch(job, e);
        }
    }

    /** The part of {@link #launch} after its slot is taken; {@link #abortLaunch} undoes it if it throws. */
    private void startRun(Job job, FencingToken token, long claimSentNanos) {
        Run run = new Run(job, token, parse(job));
        run.leaseDeadlineNanos = claimSentNanos + leaseNanosAsTheStoreCountsIt();
        inHand.put(token, run);
        run.thread = Thread.ofVirtual().name("jobq-job-" + job.id() + "#" + job.attempts())
                .unstarted(() -> execute(run));
        settings.timeoutFor(job.task()).ifPresent(timeout -> {
            try {
                run.timeout = timer.schedule(() -> timeOut(run, timeout), timeout.toNanos(), TimeUnit.NANOSECONDS);
            } catch (java.util.concurrent.RejectedExecutionException e) {
                // the timer stopped with the worker; the run is abandoned by close() anyway
            }
        });
        jobLog(log.atDebug(), job).addKeyValue("token", token)
                .log("job {} attempt {}/{} started", job.id(), job.attempts(), job.maxAttempts());
        run.thread.start();
    }

    /**
     * A run that could not be started gives its slot back, so the rest of the batch and later claims
     * still run; the job is left to its lease (reaped, counting an attempt), as after a crash.
     */
    private void abortLaunch(Job job, Throwable e) {
        boolean fatal = FatalErrorPolicy.isFatal(e);
        if (fatal) fatal("start of a run", e);
        Run run = inHand.get(job.fencingToken());
        boolean started = run != null && run.thread != null && run.thread.getState() != Thread.State.NEW;
        if (!started) {
            if (run != null) {
                inHand.remove(run.token);
                Future<?> timeout = run.timeout;
                if (timeout != null) timeout.cancel(false);
            }
            slots.release();
        }
        if (!fatal) {
            jobLog(log.atError(), job).setCause(e).log("job {} attempt {} could not be started on worker {}; it is left to"
                    + " its lease: {}", job.id(), job.attempts(), id, e.toString());
        }
    }

    private ParsedPayload parse(Job job) {
        try {
            JsonNode node = mapper.readTree(job.payload());
            if (node == null || node.isMissingNode()) {
                return new ParsedPayload(MissingNode.getInstance(), "payload of job " + job.id() + " is empty, not JSON");
            }
            return new ParsedPayload(node, null);
        } catch (JacksonException e) {
            return new ParsedPayload(MissingNode.getInstance(),
                    "payload of job " + job.id() + " is not valid JSON: " + e.getOriginalMessage());
        } catch (RuntimeException | Error e) {
            if (FatalErrorPolicy.isFatal(e)) throw e; // the JVM's trouble, not this payload's: see abortLaunch
            // Not the payload's fault for certain (a broken class path, a custom mapper's bug): retryable.
            return new ParsedPayload(MissingNode.getInstance(),
                    "payload of job " + job.id() + " could not be parsed: " + describe(e), FailureKind.ERROR);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // running one job

    private void execute(Run run) {
        try {
            Outcome outcome = invoke(run);
            if (run.phase.compareAndSet(Phase.RUNNING, Phase.FINISHING)) {
                // the handler's own outcome stands
            } else if (run.phase.compareAndSet(Phase.TIMED_OUT, Phase.FINISHING)) {
                outcome = new Outcome.Failed(run.timeoutReason == null ? "timed out" : run.timeoutReason,
                        FailureKind.TIMEOUT, null);
            } else {
                if (run.phase.get() == Phase.RELEASED) {
                    jobLog(log.atWarn(), run.job).log("job {} attempt {}: the handler returned {} ms after it started,"
                            + " long after its timeout; what it returned is discarded (the timeout failure stands)",
                            run.job.id(), run.job.attempts(), run.elapsed(clock).toMillis());
                }
                return; // abandoned at shutdown (close() reported the discard) or released after its timeout
            }
            Future<?> timeout = run.timeout;
            if (timeout != null) timeout.cancel(false);
            Thread.interrupted(); // a timeout's interrupt may land after the handler returned; don't let it hit the store call
            finish(run, outcome);
        } catch (Throwable t) {
            unexpected("job thread", t); // the thread's name says which job
        } finally {
            // A released run's slot was given back by releaseOverrun, which owns the run from then on.
            if (run.phase.get() != Phase.RELEASED) endRun(run);
        }
    }

    /** Records the outcome, unless the lease was lost meanwhile (then nobody may write for this run). */
    private void finish(Run run, Outcome outcome) {
        if (run.leaseLost) {
            discard(run, DiscardReason.LEASE_LOST, "its lease was lost while the handler ran");
        } else {
            record(run, outcome);
        }
    }

    /** Stops heartbeating the run and gives its slot back; called exactly once per run. */
    private void endRun(Run run) {
        inHand.remove(run.token);
        slots.release();
        claimSignal.signal();
    }

    private Outcome invoke(Run run) {
        Job job = run.job;
        if (run.payload.error() != null) return new Outcome.Failed(run.payload.error(), run.payload.kind(), null);
        JobHandler handler = handlers.get(job.task());
        if (handler == null) {
            return new Outcome.Failed("no handler for task '" + job.task() + "' on worker " + id
                    + " (it runs: " + handlers.keySet() + ")", FailureKind.ERROR, null);
        }
        try {
            Optional<JsonNode> result = handler.handle(run.context);
            if (result == null || result.isEmpty()) return new Outcome.Succeeded(Optional.empty());
            return new Outcome.Succeeded(Optional.of(mapper.writeValueAsString(result.get())));
        } catch (Throwable t) {
            if (FatalErrorPolicy.isFatal(t)) fatal("handler", t); // the thread's name says which job
            Optional<PermanentJobFailure> permanent = findPermanent(t);
            if (permanent.isPresent()) return new Outcome.Failed(permanent.get().getMessage(), FailureKind.PERMANENT, t);
            return new Outcome.Failed(describe(t), FailureKind.ERROR, t);
        }
    }

    private void timeOut(Run run, Duration timeout) {
        String reason = "task '" + run.job.task() + "' timed out after " + timeout.toMillis() + " ms (job "
                + run.job.id() + ", attempt " + run.job.attempts() + " of " + run.job.maxAttempts() + ")";
        // Set before the swap: a handler returning right after it records this reason, not a bare "timed out".
        run.timeoutReason = reason;
        if (!run.phase.compareAndSet(Phase.RUNNING, Phase.TIMED_OUT)) return;
        run.context.cancel(reason);
        run.thread.interrupt();
        Duration grace = timeoutGrace(timeout);
        jobLog(log.atInfo(), run.job).log("job {} {}; its thread was interrupted and has {} ms to return",
                run.job.id(), reason, grace.toMillis());
        try {
            run.timeout = timer.schedule(() -> releaseOverrun(run, grace), grace.toNanos(), TimeUnit.NANOSECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // the timer stopped with the worker; close() abandons the run anyway
        }
    }

    /**
     * How long a timed-out handler has to react to its interrupt before its slot is taken back: as long
     * again as its timeout, at most {@link #TIMEOUT_GRACE_CAP}.
     */
    static Duration timeoutGrace(Duration timeout) {
        return min(timeout, TIMEOUT_GRACE_CAP);
    }

    /**
     * The handler ignored its timeout's interrupt for the whole grace. Waiting longer would let one hung
     * handler hold a slot, and keep its lease alive by heartbeats, forever. So the run is cut loose: the
     * timeout failure is recorded now (retryable, fenced like any outcome), the run leaves {@link #inHand}
     * (no more heartbeats) and its slot is given back. Its thread cannot be stopped and may run on;
     * {@link #execute} discards whatever it returns. Runs on its own virtual thread: the write may take
     * seconds and must not hold up the timer, which times every other run.
     */
    private void releaseOverrun(Run run, Duration grace) {
        if (!run.phase.compareAndSet(Phase.TIMED_OUT, Phase.RELEASED)) return; // returned meanwhile, or abandoned
        String error = run.timeoutReason + "; the handler ignored the interrupt for " + grace.toMillis()
                + " ms, so its slot was freed and whatever it returns later is discarded";
        jobLog(log.atWarn(), run.job).log("job {} attempt {}: {}; its thread ({}) may still be running",
                run.job.id(), run.job.attempts(), error, run.thread);
        Thread.ofVirtual().name("jobq-timed-out-" + run.job.id() + "#" + run.job.attempts()).start(() -> {
            try {
                finish(run, new Outcome.Failed(error, FailureKind.TIMEOUT, null));
            } finally {
                endRun(run);
            }
        });
    }

    private void record(Run run, Outcome outcome) {
        FencingToken token = run.token;
        switch (outcome) {
            case Outcome.Succeeded s -> {
                Optional<FencedWrite> write = writeWithRetries("complete", run, () -> store.complete(token, s.resultJson()));
                if (write.isEmpty()) return;
                switch (write.get()) {
                    case FencedWrite.Applied applied -> {
                        jobLog(log.atDebug(), run.job).addKeyValue("tookMs", run.elapsed(clock).toMillis())
                                .log("job {} done (attempt {}/{}, {} ms)", run.job.id(), run.job.attempts(),
                                        run.job.maxAttempts(), run.elapsed(clock).toMillis());
                        notify(() -> listener.completed(applied.job()));
                    }
                    case FencedWrite.Rejected rejected -> discard(run, DiscardReason.WRITE_REJECTED,
                            "the store refused its completion: " + describeCurrent(rejected));
                }
            }
            case Outcome.Failed f -> {
                String error = StoredText.sanitize(f.error(), JobStore.MAX_ERROR_BYTES);
                // Decided once: a write tried again writes the same decision, not a fresh draw.
                RetryDecision decision = retryPolicy.decide(token.attempt(), run.job.maxAttempts(), f.kind());
                Optional<FencedWrite> write = writeWithRetries("fail", run, () -> store.fail(token, error, decision));
                if (write.isEmpty()) return;
                switch (write.get()) {
                    case FencedWrite.Applied applied -> {
                        logFailure(run.job, decision, error, f);
                        notify(() -> listener.failed(run.job, error, applied.job()));
                    }
                    case FencedWrite.Rejected rejected -> discard(run, DiscardReason.WRITE_REJECTED,
                            "the store refused its failure (" + error + "): " + describeCurrent(rejected));
                }
            }
        }
    }

    /**
     * Tries {@code write} up to {@link #WRITE_ATTEMPTS} times. A complete whose commit succeeded but
     * whose answer was lost is retried and then rejected; a rejection on a retry that shows the job
     * done at this very attempt is therefore counted as applied (only this run can complete that attempt).
     *
     * @return the store's answer, or empty when every try threw (the run is then discarded)
     */
    private Optional<FencedWrite> writeWithRetries(String operation, Run run, Supplier<FencedWrite> write) {
        Duration pause = WRITE_RETRY_PAUSE;
        for (int attempt = 1; ; attempt++) {
            try {
                FencedWrite result = write.get();
                if (attempt > 1 && operation.equals("complete") && result instanceof FencedWrite.Rejected r
                        && r.current().filter(j -> j.state() == JobState.DONE && j.attempts() == run.token.attempt()).isPresent()) {
                    return Optional.of(new FencedWrite.Applied(r.current().get()));
                }
                return Optional.of(result);
            } catch (Throwable e) {
                if (FatalErrorPolicy.isFatal(e)) fatal("store call", e);
                boolean last = attempt >= WRITE_ATTEMPTS || abandoning;
                storeError(operation, e, last ? null : pause);
                if (last) break;
                try {
                    Thread.sleep(pause);
                } catch (InterruptedException ie) {
                    break;
                }
                pause = pause.multipliedBy(2);
            }
        }
        discard(run, DiscardReason.WRITE_FAILED, "its " + operation + " kept failing; it is left to its lease");
        return Optional.empty();
    }

    /** Logs the failure as it was decided (the store wrote exactly that). */
    private void logFailure(Job claimed, RetryDecision decision, String error, Outcome.Failed f) {
        // Stack traces only for unexpected exceptions; a PermanentJobFailure's message says it all.
        Throwable stack = f.kind() == FailureKind.PERMANENT ? null : f.cause();
        switch (decision) {
            case RetryDecision.Dead dead -> jobLog(log.atWarn(), claimed).addKeyValue("failure", f.kind())
                    .addKeyValue("cause", dead.cause()).setCause(stack)
                    .log("job {} is dead after attempt {}/{} ({}): {}", claimed.id(), claimed.attempts(),
                            claimed.maxAttempts(), dead.cause().description(), error);
            case RetryDecision.RetryAfter retry -> jobLog(log.atInfo(), claimed).addKeyValue("failure", f.kind())
                    .addKeyValue("retryDelayMs", retry.delay().toMillis()).setCause(stack)
                    .log("job {} failed on attempt {}/{}, retry in {} ms: {}", claimed.id(), claimed.attempts(),
                            claimed.maxAttempts(), retry.delay().toMillis(), error);
        }
    }

    private void discard(Run run, DiscardReason reason, String why) {
        jobLog(log.atWarn(), run.job).addKeyValue("reason", reason)
                .log("job {} attempt {}: outcome discarded, {}", run.job.id(), run.job.attempts(), why);
        notify(() -> listener.discarded(run.token, reason));
    }

    private void abandonInHand() {
        for (Run run : List.copyOf(inHand.values())) {
            Phase from = run.phase.get();
            if ((from == Phase.RUNNING || from == Phase.TIMED_OUT) && run.phase.compareAndSet(from, Phase.ABANDONED)) {
                run.context.cancel("worker " + id + " shut down: grace period of " + settings.gracePeriod().toMillis()
                        + " ms elapsed");
                run.thread.interrupt();
                discard(run, DiscardReason.SHUTDOWN, "the grace period ended first; it is left to its lease");
            }
        }
    }

    // ---------------------------------------------------------------------------------------------
    // heartbeat and maintenance

    private void heartbeatLoop() {
        Duration every = settings.effectiveHeartbeatInterval();
        Backoff outage = new Backoff(WorkerSettings.MIN_OUTAGE_BACKOFF, settings.outageBackoffCap());
        Duration wait = every;
        while (!awaitQuietly(backgroundStopped, wait)) {
            wait = every;
            List<FencingToken> tokens = new ArrayList<>();
            inHand.forEach((token, run) -> {
                if (run.phase.get() != Phase.ABANDONED && !run.leaseLost) tokens.add(token);
            });
            if (tokens.isEmpty()) continue;
            Set<FencingToken> lost;
            long sentNanos = System.nanoTime();
            try {
                lost = store.heartbeat(tokens, settings.lease());
                outage.reset();
            } catch (Throwable e) {
                if (FatalErrorPolicy.isFatal(e)) fatal("store call", e);
                // Retry sooner than the period (but never later), so a short outage costs no lease.
                wait = min(every, outage.next());
                storeError("heartbeat", e, wait);
                continue;
            }
            long deadline = sentNanos + leaseNanosAsTheStoreCountsIt();
            for (FencingToken token : tokens) {
                Run run = inHand.get(token);
                if (run != null && !lost.contains(token)) run.leaseDeadlineNanos = deadline;
            }
            for (FencingToken token : lost) {
                Run run = inHand.get(token);
                Phase phase = run == null ? null : run.phase.get();
                if (phase == Phase.RUNNING || phase == Phase.TIMED_OUT) {
                    run.leaseLost = true;
                    run.context.cancel("lease lost: the store no longer holds run " + token + " (reaped or re-claimed)");
                    jobLog(log.atWarn(), run.job)
                            .log("job {} attempt {} lost its lease; the run is cancelled and its outcome will be discarded",
                                    run.job.id(), run.job.attempts());
                }
            }
            Set<FencingToken> lostCopy = Set.copyOf(lost);
            int extended = tokens.size() - lost.size();
            notify(() -> listener.heartbeat(extended, lostCopy));
        }
    }

    /** The lease as the store applies it: whole milliseconds, so a deadline from it is never later than the store's. */
    private long leaseNanosAsTheStoreCountsIt() {
        return TimeUnit.MILLISECONDS.toNanos(settings.lease().toMillis());
    }

    /**
     * Every heartbeat interval, on the timer (not in the heartbeat loop, which a hung call blocks): flags
     * every run whose lease
     * may have lapsed by now ({@link JobContext#isLeaseInJeopardy()}), because no heartbeat reached the
     * store within a lease. Once the store is back, any worker's maintenance may reap such a lease and
     * run the job again, so a handler about to perform a side effect that must not happen twice can
     * check the flag and stop (Chubby's "jeopardy": Burrows, 2006). Not a cancellation: the built-in
     * handlers, and any handler that treats cancellation as failure, would then turn every database
     * restart longer than a lease into a retry, where case R10 expects the runs to go on and finish.
     * The outcome is still offered to the store; the fence decides whether it counts.
     */
    private void flagLeasesInJeopardy() {
        try {
            long now = System.nanoTime();
            for (Run run : inHand.values()) {
                if (run.context.isLeaseInJeopardy() || run.leaseLost || now - run.leaseDeadlineNanos < 0) continue;
                if (run.phase.get() != Phase.RUNNING) continue;
                String reason = "lease in jeopardy: no heartbeat reached the store within the " + settings.lease().toMillis()
                        + " ms lease, so another worker may take run " + run.token + " over once the store is back";
                run.context.markLeaseInJeopardy(reason);
                jobLog(log.atWarn(), run.job).log("job {} attempt {}: {}; the run goes on, and the store's fence decides"
                        + " whether its outcome counts", run.job.id(), run.job.attempts(), reason);
            }
        } catch (Throwable e) {
            unexpected("lease check", e); // and keep checking
        }
    }

    private void maintenanceLoop() {
        while (!awaitQuietly(backgroundStopped, jittered(settings.maintenanceInterval()))) {
            int reaped = 0;
            int promoted = 0;
            boolean failed = false;
            try {
                ExpiredLeaseDecider decider = ExpiredLeaseDecider.by(retryPolicy);
                reaped = repeatWhileFull(limit -> store.reapExpiredLeases(limit, decider));
            } catch (Throwable e) {
                failed = true;
                maintenanceError("reap expired leases", e);
            }
            try {
                promoted = repeatWhileFull(store::promoteDue);
            } catch (Throwable e) {
                failed = true;
                maintenanceError("promote due jobs", e);
            }
            try {
                store.vacuumIfNeeded(); // the store rate-limits itself; a no-op unless autovacuum is off
            } catch (RuntimeException e) {
                failed = true;
                maintenanceError("vacuum jobq's tables", e);
            }
            if (promoted > 0) claimSignal.signal(); // our own claim loop can take them without waiting for a poll
            if (reaped > 0 || promoted > 0) {
                log.atDebug().addKeyValue("worker", id).addKeyValue("reaped", reaped).addKeyValue("promoted", promoted)
                        .log("maintenance: reaped {} expired lease(s), promoted {} due job(s)", reaped, promoted);
            }
            if (!failed) {
                int r = reaped;
                int p = promoted;
                notify(() -> listener.maintenance(r, p));
            }
        }
    }

    private int repeatWhileFull(java.util.function.IntUnaryOperator step) {
        int limit = settings.maintenanceBatchLimit();
        int total = 0;
        for (int round = 0; round < MAX_MAINTENANCE_ROUNDS && backgroundStopped.getCount() > 0; round++) {
            int n = step.applyAsInt(limit);
            total += n;
            if (n < limit) break;
        }
        return total;
    }

    private void maintenanceError(String what, Throwable e) {
        if (FatalErrorPolicy.isFatal(e)) fatal("maintenance", e);
        log.atWarn().addKeyValue("worker", id).setCause(e)
                .log("maintenance failed to {}; retrying next period: {}", what, e.toString());
        notify(() -> listener.maintenanceError(asRuntime(what, e)));
    }

    // ---------------------------------------------------------------------------------------------
    // helpers

    /** Logs and reports a failed store call; the caller has offered a fatal {@code e} to the policy already. */
    private void storeError(String operation, Throwable e, Duration retryIn) {
        log.atWarn().addKeyValue("worker", id).addKeyValue("operation", operation)
                .log("store call {} failed{}: {}", operation,
                        retryIn == null ? "; giving up" : ", retrying in " + retryIn.toMillis() + " ms", e.toString());
        notify(() -> listener.storeError(operation, asRuntime(operation, e)));
    }

    /** The listener's store-error callbacks take exceptions; an Error from the store comes wrapped. */
    private static RuntimeException asRuntime(String operation, Throwable e) {
        return e instanceof RuntimeException r ? r : new JobQueueException(operation + " threw " + e, e);
    }

    /**
     * Reports a throwable caught where the worker must go on: a fatal one to the {@link FatalErrorPolicy},
     * any other to the log. Never throws. Call it first thing in a catch block, with a constant
     * {@code where}: when the heap is full, any allocation before the policy halts the JVM (building a
     * message, a Duration) throws again and ends the thread instead.
     */
    private void unexpected(String where, Throwable e) {
        if (FatalErrorPolicy.isFatal(e)) {
            fatal(where, e);
            return;
        }
        try {
            log.atError().addKeyValue("worker", id).setCause(e)
                    .log("{} of worker {} failed unexpectedly; it carries on: {}", where, id, e.toString());
        } catch (Throwable ignored) {
            // logging failed as well; nothing else could report it
        }
    }

    /** Hands a fatal {@code e} to the policy. Allocates nothing (see {@link #unexpected}). */
    private void fatal(String where, Throwable e) {
        try {
            fatalErrors.onFatalError(where, e);
        } catch (Throwable ignored) {
            // a policy that throws is treated like one that returns
        }
    }

    /**
     * Runs a background loop (heartbeat, maintenance) until it returns, which it does once the worker
     * stops. A throwable escaping the loop is reported and the loop entered again after a pause, so
     * that the thread never dies with the worker still running.
     */
    private void keepRunning(String name, Runnable loop) {
        Backoff pause = new Backoff(WorkerSettings.MIN_OUTAGE_BACKOFF, settings.outageBackoffCap());
        while (true) {
            try {
                loop.run();
                return;
            } catch (Throwable e) {
                unexpected(name, e);
                if (awaitQuietly(backgroundStopped, pause.next())) return;
            }
        }
    }

    private static LoggingEventBuilder jobLog(LoggingEventBuilder event, Job job) {
        // Identity and retry fields only: payloads may hold personal data and never go to logs.
        return event.addKeyValue("job", job.id()).addKeyValue("tenant", job.tenant())
                .addKeyValue("queue", job.queue()).addKeyValue("task", job.task())
                .addKeyValue("attempt", job.attempts()).addKeyValue("maxAttempts", job.maxAttempts());
    }

    private void notify(Runnable callback) {
        try {
            callback.run();
        } catch (Throwable e) {
            unexpected("listener callback", e);
        }
    }

    private void closeQuietly(WakeupChannel channel) {
        try {
            channel.close();
        } catch (Throwable e) {
            unexpected("closing the wake-up channel", e);
        }
    }

    private static String describeCurrent(FencedWrite.Rejected rejected) {
        return rejected.current()
                .map(j -> "the job is now " + j.state().dbName() + " at attempt " + j.attempts()
                        + j.lockedBy().map(w -> " held by " + w).orElse(""))
                .orElse("the job no longer exists");
    }

    /** {@code Class: message}, with up to three causes, so the stored error names what went wrong. */
    static String describe(Throwable t) {
        StringBuilder out = new StringBuilder();
        Set<Throwable> seen = new LinkedHashSet<>();
        for (Throwable c = t; c != null && seen.add(c) && seen.size() <= 4; c = c.getCause()) {
            if (c != t) out.append("; caused by ");
            out.append(c.getClass().getName());
            if (c.getMessage() != null) out.append(": ").append(c.getMessage());
        }
        return out.toString();
    }

    private static Optional<PermanentJobFailure> findPermanent(Throwable t) {
        Set<Throwable> seen = new LinkedHashSet<>();
        for (Throwable c = t; c != null && seen.add(c); c = c.getCause()) {
            if (c instanceof PermanentJobFailure p) return Optional.of(p);
        }
        return Optional.empty();
    }

    private static Duration remaining(long deadlineNanos) {
        return Duration.ofNanos(Math.max(0, deadlineNanos - System.nanoTime()));
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }

    /** {@code mean} scaled by a uniform factor in [0.8, 1.2]. */
    static Duration jittered(Duration mean) {
        return Duration.ofNanos((long) (mean.toNanos() * ThreadLocalRandom.current().nextDouble(0.8, 1.2)));
    }

    /** @return whether the latch opened (stop requested) within {@code timeout}; an interrupt counts as stop */
    private static boolean awaitQuietly(CountDownLatch latch, Duration timeout) {
        try {
            return latch.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return true;
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

    // ---------------------------------------------------------------------------------------------
    // state of one run

    private enum Phase {
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

    /**
     * @param kind how a payload {@code error} (if any) fails the run: {@link FailureKind#PERMANENT} when it is the
     *     payload's own fault, so retrying cannot help
     */
    private record ParsedPayload(JsonNode node, String error, FailureKind kind) {
        ParsedPayload(JsonNode node, String error) {
            this(node, error, FailureKind.PERMANENT);
        }
    }

    private final class Run {
        final Job job;
        final FencingToken token;
        final ParsedPayload payload;
        final JobContext context;
        final Instant startedAt;
        final AtomicReference<Phase> phase = new AtomicReference<>(Phase.RUNNING);
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
        volatile Future<?> timeout;

        Run(Job job, FencingToken token, ParsedPayload payload) {
            this.job = job;
            this.token = token;
            this.payload = payload;
            this.context = new JobContext(job, payload.node(), mapper);
            this.startedAt = clock.instant();
        }

        Duration elapsed(InstantSource now) {
            Duration d = Duration.between(startedAt, now.instant());
            return d.isNegative() ? Duration.ZERO : d;
        }
    }

    /** What a handler's run came to, before it is recorded. */
    private sealed interface Outcome {
        record Succeeded(Optional<String> resultJson) implements Outcome {}

        /**
         * @param kind what the retry policy decides from (with the attempt numbers)
         * @param cause the handler's exception, or null for a failure the worker decided (no handler, timeout, bad JSON)
         */
        record Failed(String error, FailureKind kind, Throwable cause) implements Outcome {}
    }

    /** A wake-up flag for the claim loop: signals coalesce; await returns on a signal or a timeout. */
    private static final class Signal {
        private final Semaphore permits = new Semaphore(0);

        void signal() {
            if (permits.availablePermits() == 0) permits.release();
        }

        void await(Duration timeout) {
            try {
                permits.tryAcquire(timeout.toNanos(), TimeUnit.NANOSECONDS);
                permits.drainPermits();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Exponential pauses with equal jitter: each in [d/2, d], d doubling from {@code first} up to {@code cap}. */
    private static final class Backoff {
        private final Duration first;
        private final Duration cap;
        private Duration next;

        Backoff(Duration first, Duration cap) {
            this.first = first;
            this.cap = cap;
            this.next = first;
        }

        Duration next() {
            Duration d = next;
            next = min(cap, next.multipliedBy(2));
            long half = d.toNanos() / 2;
            return Duration.ofNanos(half + ThreadLocalRandom.current().nextLong(half + 1));
        }

        void reset() {
            next = first;
        }
    }
}
