package io.jobq.application.worker;

import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.lease.WorkerId;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * How a {@link Worker} runs. Build with {@code WorkerSettings.builder().concurrency(8).build()}, or copy
 * with {@code settings.toBuilder().lease(…).build()}; fields not set keep the defaults ({@link #DEFAULTS},
 * documented on each field below). Every build is validated, and a {@link IllegalArgumentException}
 * lists every problem at once, naming field, limit and value.
 *
 * @param queues the queues to claim from, 1 or more, distinct, in no particular priority (the store
 *     orders across them by fair start tag). Default: [default].
 * @param concurrency execution slots: how many jobs run at once, each on its own virtual thread;
 *     1..1,000. Default: 4.
 * @param claimBatchSize most jobs taken by one claim; each claim asks for
 *     {@code min(free slots (+ prefetch room), claimBatchSize)}, so it never takes more than the worker can
 *     start; 1..1,000. Default: 100, so a worker's claims normally cover every free slot and its prefetch room
 *     (as River's and Oban's fetches do): with {@code prefetch} 20 a claim takes up to slots + 20 jobs instead of
 *     10 (docs/benchmarks.md compares the two). Lower it to bound how many rows one claim statement locks and
 *     updates.
 * @param lease how long a claim or heartbeat leases a job, by the store's clock; at least 100 ms.
 *     Default: 30 s.
 * @param heartbeatInterval how often one heartbeat extends every in-hand lease; must be shorter than
 *     {@code lease}. Default: empty, meaning {@code lease / 3} (10 s with the default lease), so two
 *     heartbeats can fail before a lease lapses.
 * @param pollInterval the fallback poll: the longest an idle worker waits before claiming again when
 *     no wake-up arrives; positive. Default: 1 s.
 * @param listen whether to start the {@link io.jobq.application.port.WakeupChannel}; false is
 *     polling-only mode, for benchmarks. Default: true.
 * @param maintenanceEnabled whether this worker takes its turns at the queue's upkeep (reaping expired leases,
 *     promoting due jobs, retention, vacuum) and fires cron schedules. Default: true.
 * @param maintenanceInterval the mean period between this worker's asks for the upkeep turn (the queue's
 *     maintenance: one pass a period across all workers, by whichever gets the turn), each period jittered
 *     uniformly by ±20% so that many workers do not ask in lockstep; positive. Default: 1 s.
 * @param maintenanceBatchLimit most jobs one reap or promote statement touches; a full batch is
 *     followed at once by another; 1..100,000. Default: 1,000.
 * @param gracePeriod how long {@link Worker#close()} waits for in-hand jobs to finish; zero abandons
 *     them at once (left to their leases). Default: 30 s.
 * @param taskTimeouts per task, the longest a run may take before it is timed out (see
 *     {@link Worker}: its thread is interrupted, and the job failed retryably); each positive; a task
 *     listed here is not subject to {@code defaultTaskTimeout}. Default: none.
 * @param defaultTaskTimeout the timeout of every task not in {@code taskTimeouts}; empty means those
 *     tasks may run forever (a handler that hangs then holds its slot until the process stops);
 *     positive when present. Default: {@link #DEFAULT_TASK_TIMEOUT}, 15 min.
 * @param workerId the lease owner's name. Default: empty, meaning {@code <host>-<pid>-<4 hex>}
 *     generated per worker instance.
 * @param outageBackoffCap the longest pause between attempts while the store is unavailable; pauses
 *     start at 100 ms and double up to this; at least 100 ms. Default: 5 s.
 * @param outcomeBatchSize most run outcomes written in one statement (one commit), which the claim loop
 *     sends with its next claim; 1 writes one outcome per statement; 1..1,000. Default: 100.
 * @param batchFillWait how long the worker waits to fill a batch while handlers are still running: a
 *     claim waits for more room (up to {@code min(claimBatchSize, concurrency + prefetch)}), so its claims
 *     come back full, and carries every outcome handed over meanwhile, so a busy worker commits many at
 *     once; it does not wait when no handler is running, so a lone run's outcome and the next claim go at
 *     once. The latency a busy worker trades for fewer commits (while one long handler keeps a slot, every
 *     pickup beside it pays it); 0..1 s. Default: 2 ms.
 * @param prefetch how many jobs the worker may hold claimed beyond its free slots, waiting for one: a
 *     claim then asks for up to {@code free slots + prefetch - jobs waiting} (at most
 *     {@code claimBatchSize}), so short jobs are claimed many per commit even by a worker with one slot,
 *     and a freed slot starts the next job without a round trip. Waiting jobs are leased and heartbeated
 *     like running ones and given back unrun at shutdown ({@link io.jobq.application.port.JobStore#release}).
 *     The price: a waiting job is not available to other workers, so with long jobs it may wait behind
 *     them while another worker idles. For throughput of short jobs, about 20 (measured in
 *     docs/benchmarks.md: a one-slot worker then claims up to 21 jobs per commit); 0..1,000. Default: 0
 *     (claim only for free slots).
 */
public record WorkerSettings(
        List<QueueName> queues,
        int concurrency,
        int claimBatchSize,
        Duration lease,
        Optional<Duration> heartbeatInterval,
        Duration pollInterval,
        boolean listen,
        boolean maintenanceEnabled,
        Duration maintenanceInterval,
        int maintenanceBatchLimit,
        Duration gracePeriod,
        Map<TaskName, Duration> taskTimeouts,
        Optional<Duration> defaultTaskTimeout,
        Optional<WorkerId> workerId,
        Duration outageBackoffCap,
        int outcomeBatchSize,
        Duration batchFillWait,
        int prefetch) {

    /** Most slots, claim batch: 1,000 (the store's largest claim). */
    public static final int MAX_CONCURRENCY = 1000;
    /** Shortest lease: 100 ms. */
    public static final Duration MIN_LEASE = Duration.ofMillis(100);
    /** Largest maintenance batch: 100,000. */
    public static final int MAX_MAINTENANCE_BATCH = 100_000;
    /** Longest {@link #batchFillWait}: 1 s. */
    public static final Duration MAX_BATCH_FILL_WAIT = Duration.ofSeconds(1);
    /** First pause after a store failure: 100 ms, doubling up to {@link #outageBackoffCap}. */
    public static final Duration MIN_OUTAGE_BACKOFF = Duration.ofMillis(100);

    /**
     * The timeout of tasks without one of their own: 15 min. Long enough that no ordinary background
     * job (an e-mail, a report, an image) is cut short, and a task that needs longer gets its own
     * entry; short enough that a handler hung on a read without a timeout, or a deadlock, gives its
     * slot back within a quarter of an hour instead of never (AWS Lambda caps a run at the same 15 min).
     */
    public static final Duration DEFAULT_TASK_TIMEOUT = Duration.ofMinutes(15);

    /** The production defaults, documented on each field: {@code builder().build()}. */
    public static final WorkerSettings DEFAULTS = builder().build();

    /** A builder holding the defaults; see {@link Builder}. */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder holding these settings, to build a copy that differs in a few fields. */
    public Builder toBuilder() {
        return new Builder(this);
    }

    /** @throws IllegalArgumentException listing every invalid field, with its limit and value */
    public WorkerSettings {
        Objects.requireNonNull(queues, "queues");
        Objects.requireNonNull(lease, "lease");
        Objects.requireNonNull(heartbeatInterval, "heartbeatInterval");
        Objects.requireNonNull(pollInterval, "pollInterval");
        Objects.requireNonNull(maintenanceInterval, "maintenanceInterval");
        Objects.requireNonNull(gracePeriod, "gracePeriod");
        Objects.requireNonNull(taskTimeouts, "taskTimeouts");
        Objects.requireNonNull(defaultTaskTimeout, "defaultTaskTimeout");
        Objects.requireNonNull(workerId, "workerId");
        Objects.requireNonNull(outageBackoffCap, "outageBackoffCap");
        queues = List.copyOf(queues);
        taskTimeouts = Map.copyOf(taskTimeouts);

        List<String> problems = new ArrayList<>();
        if (queues.isEmpty()) problems.add("queues must name at least one queue, was []");
        if (queues.stream().distinct().count() != queues.size()) problems.add("queues must be distinct, was " + queues);
        if (concurrency < 1 || concurrency > MAX_CONCURRENCY) {
            problems.add("concurrency must be 1-" + MAX_CONCURRENCY + ", was " + concurrency);
        }
        if (claimBatchSize < 1 || claimBatchSize > MAX_CONCURRENCY) {
            problems.add("claimBatchSize must be 1-" + MAX_CONCURRENCY + ", was " + claimBatchSize);
        }
        if (prefetch < 0 || prefetch > MAX_CONCURRENCY) {
            problems.add("prefetch must be 0-" + MAX_CONCURRENCY + ", was " + prefetch);
        }
        if (outcomeBatchSize < 1 || outcomeBatchSize > MAX_CONCURRENCY) {
            problems.add("outcomeBatchSize must be 1-" + MAX_CONCURRENCY + ", was " + outcomeBatchSize);
        }
        Objects.requireNonNull(batchFillWait, "batchFillWait");
        if (batchFillWait.isNegative() || batchFillWait.compareTo(MAX_BATCH_FILL_WAIT) > 0) {
            problems.add("batchFillWait must be 0-" + MAX_BATCH_FILL_WAIT + ", was " + batchFillWait);
        }
        if (lease.compareTo(MIN_LEASE) < 0) problems.add("lease must be >= " + MIN_LEASE + ", was " + lease);
        heartbeatInterval.ifPresent(h -> {
            if (!h.isPositive()) problems.add("heartbeatInterval must be positive, was " + h);
            else if (h.compareTo(lease) >= 0) {
                problems.add("heartbeatInterval must be shorter than lease (" + lease + "), was " + h);
            }
        });
        if (!pollInterval.isPositive()) problems.add("pollInterval must be positive, was " + pollInterval);
        if (!maintenanceInterval.isPositive()) {
            problems.add("maintenanceInterval must be positive, was " + maintenanceInterval);
        }
        if (maintenanceBatchLimit < 1 || maintenanceBatchLimit > MAX_MAINTENANCE_BATCH) {
            problems.add("maintenanceBatchLimit must be 1-" + MAX_MAINTENANCE_BATCH + ", was " + maintenanceBatchLimit);
        }
        if (gracePeriod.isNegative()) problems.add("gracePeriod must be >= 0, was " + gracePeriod);
        taskTimeouts.forEach((task, timeout) -> {
            if (!timeout.isPositive()) problems.add("taskTimeouts[" + task + "] must be positive, was " + timeout);
        });
        defaultTaskTimeout.ifPresent(t -> {
            if (!t.isPositive()) problems.add("defaultTaskTimeout must be positive, was " + t);
        });
        if (outageBackoffCap.compareTo(MIN_OUTAGE_BACKOFF) < 0) {
            problems.add("outageBackoffCap must be >= " + MIN_OUTAGE_BACKOFF + ", was " + outageBackoffCap);
        }
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException("invalid worker settings: " + String.join("; ", problems));
        }
    }

    /** The heartbeat period in force: {@link #heartbeatInterval} if set, else {@code lease / 3}. */
    public Duration effectiveHeartbeatInterval() {
        return heartbeatInterval.orElseGet(() -> lease.dividedBy(3));
    }

    /** The timeout of {@code task}'s runs: its own from {@link #taskTimeouts}, else {@link #defaultTaskTimeout}. */
    public Optional<Duration> timeoutFor(TaskName task) {
        Duration own = taskTimeouts.get(task);
        return own != null ? Optional.of(own) : defaultTaskTimeout;
    }

    /**
     * Collects settings field by field; {@link #build()} validates them together, so fields may be set
     * in any order (a shorter lease and a shorter heartbeat, say) and every problem is reported at once.
     * A new builder holds the defaults: its initial values are the one place they are written. Not
     * thread-safe; reusable: each {@code build()} makes an independent {@link WorkerSettings}.
     */
    public static final class Builder {
        private List<QueueName> queues = List.of(QueueName.DEFAULT);
        private int concurrency = 4;
        private int claimBatchSize = 100;
        private Duration lease = Duration.ofSeconds(30);
        private Optional<Duration> heartbeatInterval = Optional.empty();
        private Duration pollInterval = Duration.ofSeconds(1);
        private boolean listen = true;
        private boolean maintenanceEnabled = true;
        private Duration maintenanceInterval = Duration.ofSeconds(1);
        private int maintenanceBatchLimit = 1000;
        private Duration gracePeriod = Duration.ofSeconds(30);
        private Map<TaskName, Duration> taskTimeouts = new LinkedHashMap<>();
        private Optional<Duration> defaultTaskTimeout = Optional.of(DEFAULT_TASK_TIMEOUT);
        private Optional<WorkerId> workerId = Optional.empty();
        private Duration outageBackoffCap = Duration.ofSeconds(5);
        private int outcomeBatchSize = 100;
        private Duration batchFillWait = Duration.ofMillis(2);
        private int prefetch = 0;

        private Builder() {}

        private Builder(WorkerSettings from) {
            queues = from.queues;
            concurrency = from.concurrency;
            claimBatchSize = from.claimBatchSize;
            lease = from.lease;
            heartbeatInterval = from.heartbeatInterval;
            pollInterval = from.pollInterval;
            listen = from.listen;
            maintenanceEnabled = from.maintenanceEnabled;
            maintenanceInterval = from.maintenanceInterval;
            maintenanceBatchLimit = from.maintenanceBatchLimit;
            outcomeBatchSize = from.outcomeBatchSize;
            batchFillWait = from.batchFillWait;
            prefetch = from.prefetch;
            gracePeriod = from.gracePeriod;
            taskTimeouts = new LinkedHashMap<>(from.taskTimeouts);
            defaultTaskTimeout = from.defaultTaskTimeout;
            workerId = from.workerId;
            outageBackoffCap = from.outageBackoffCap;
        }

        /** The queues to claim from: 1 or more, distinct. */
        public Builder queues(List<QueueName> value) {
            queues = value;
            return this;
        }

        /** The queues to claim from, as arguments: {@code queues(QueueName.of("mail"), QueueName.of("reports"))}. */
        public Builder queues(QueueName... value) {
            return queues(List.of(value));
        }

        /** Execution slots, 1..{@value WorkerSettings#MAX_CONCURRENCY}: how many jobs run at once. */
        public Builder concurrency(int value) {
            concurrency = value;
            return this;
        }

        /** Most jobs one claim takes, 1..{@value WorkerSettings#MAX_CONCURRENCY}; a claim never asks for more than the free slots. */
        public Builder claimBatchSize(int value) {
            claimBatchSize = value;
            return this;
        }

        /** How long a claim or heartbeat leases a job, at least {@link WorkerSettings#MIN_LEASE}; an unset heartbeat interval follows it. */
        public Builder lease(Duration value) {
            lease = value;
            return this;
        }

        /** How often one heartbeat extends every in-hand lease; shorter than the lease. */
        public Builder heartbeatInterval(Duration value) {
            return heartbeatInterval(Optional.of(value));
        }

        /** The heartbeat interval, or empty for {@code lease / 3}. */
        public Builder heartbeatInterval(Optional<Duration> value) {
            heartbeatInterval = value;
            return this;
        }

        /** The longest an idle worker waits before claiming again without a wake-up; positive. */
        public Builder pollInterval(Duration value) {
            pollInterval = value;
            return this;
        }

        /** The value of {@link WorkerSettings#listen()}: false is polling-only mode. */
        public Builder listen(boolean value) {
            listen = value;
            return this;
        }

        /** The value of {@link WorkerSettings#maintenanceEnabled()}. */
        public Builder maintenanceEnabled(boolean value) {
            maintenanceEnabled = value;
            return this;
        }

        /** The mean period of reaping and promotion (jittered ±20%); positive. */
        public Builder maintenanceInterval(Duration value) {
            maintenanceInterval = value;
            return this;
        }

        /** Most jobs one reap or promote statement touches, 1..{@value WorkerSettings#MAX_MAINTENANCE_BATCH}. */
        public Builder maintenanceBatchLimit(int value) {
            maintenanceBatchLimit = value;
            return this;
        }

        /** How long {@link Worker#close()} waits for in-hand jobs; zero abandons them to their leases. */
        public Builder gracePeriod(Duration value) {
            gracePeriod = value;
            return this;
        }

        /** Replaces every task's own timeout with {@code value}'s. */
        public Builder taskTimeouts(Map<TaskName, Duration> value) {
            taskTimeouts = new LinkedHashMap<>(Objects.requireNonNull(value, "taskTimeouts"));
            return this;
        }

        /** Sets {@code task}'s own timeout (replacing an earlier one), keeping the other tasks'. */
        public Builder taskTimeout(TaskName task, Duration timeout) {
            taskTimeouts.put(Objects.requireNonNull(task, "task"), Objects.requireNonNull(timeout, "timeout"));
            return this;
        }

        /** The timeout of tasks without their own; empty: no timeout for them. */
        public Builder defaultTaskTimeout(Optional<Duration> value) {
            defaultTaskTimeout = value;
            return this;
        }

        /** The lease owner's name; without one, {@code <host>-<pid>-<4 hex>}. */
        public Builder workerId(WorkerId value) {
            return workerId(Optional.of(value));
        }

        /** The lease owner's name, or empty for one generated per worker instance. */
        public Builder workerId(Optional<WorkerId> value) {
            workerId = value;
            return this;
        }

        /** The longest pause between attempts while the store is unavailable; at least
         * {@link WorkerSettings#MIN_OUTAGE_BACKOFF}. */
        public Builder outageBackoffCap(Duration value) {
            outageBackoffCap = value;
            return this;
        }

        /** Most run outcomes written in one statement; 1 writes each on its run's thread. */
        public Builder outcomeBatchSize(int value) {
            outcomeBatchSize = value;
            return this;
        }

        /** How long a claim or a write of outcomes waits to fill its batch while handlers run (0 to never wait). */
        public Builder batchFillWait(Duration value) {
            batchFillWait = value;
            return this;
        }

        /** How many jobs may wait claimed beyond the free slots, 0..{@value WorkerSettings#MAX_CONCURRENCY}; 0 claims only for free slots. */
        public Builder prefetch(int value) {
            prefetch = value;
            return this;
        }

        /** @throws IllegalArgumentException listing every invalid field, with its limit and value */
        public WorkerSettings build() {
            return new WorkerSettings(queues, concurrency, claimBatchSize, lease, heartbeatInterval, pollInterval, listen,
                    maintenanceEnabled, maintenanceInterval, maintenanceBatchLimit, gracePeriod, taskTimeouts,
                    defaultTaskTimeout, workerId, outageBackoffCap, outcomeBatchSize, batchFillWait, prefetch);
        }
    }
}
