package io.jobq.application.worker;

import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.lease.WorkerId;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * How a {@link Worker} runs. Start from {@link #DEFAULTS} and change fields with the {@code withX}
 * copies; every copy is validated, and a {@link IllegalArgumentException} lists every problem at
 * once, naming field, limit and value.
 *
 * @param queues the queues to claim from, 1 or more, distinct, in no particular priority (the store
 *     orders across them by fair start tag). Default: [default].
 * @param concurrency execution slots: how many jobs run at once, each on its own virtual thread;
 *     1..1,000. Default: 4.
 * @param claimBatchSize most jobs taken by one claim; each claim asks for
 *     {@code min(free slots, claimBatchSize)}; 1..1,000. Default: 10 (the benchmarks' sweet spot:
 *     fewer commits per job, while a batch never exceeds the free slots).
 * @param lease how long a claim or heartbeat leases a job, by the store's clock; at least 100 ms.
 *     Default: 30 s.
 * @param heartbeatInterval how often one heartbeat extends every in-hand lease; must be shorter than
 *     {@code lease}. Default: empty, meaning {@code lease / 3} (10 s with the default lease), so two
 *     heartbeats can fail before a lease lapses.
 * @param pollInterval the fallback poll: the longest an idle worker waits before claiming again when
 *     no wake-up arrives; positive. Default: 1 s.
 * @param listen whether to start the {@link io.jobq.application.port.WakeupChannel}; false is
 *     polling-only mode, for benchmarks. Default: true.
 * @param maintenanceEnabled whether this worker reaps expired leases and promotes due jobs. Default: true.
 * @param maintenanceInterval the mean period of maintenance, each period jittered uniformly by ±20%
 *     so many workers do not run it in lockstep; positive. Default: 1 s.
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
        Duration outageBackoffCap) {

    /** Most slots, claim batch: 1,000 (the store's largest claim). */
    public static final int MAX_CONCURRENCY = 1000;
    /** Shortest lease: 100 ms. */
    public static final Duration MIN_LEASE = Duration.ofMillis(100);
    /** Largest maintenance batch: 100,000. */
    public static final int MAX_MAINTENANCE_BATCH = 100_000;
    /** First pause after a store failure: 100 ms, doubling up to {@link #outageBackoffCap}. */
    public static final Duration MIN_OUTAGE_BACKOFF = Duration.ofMillis(100);

    /**
     * The timeout of tasks without one of their own: 15 min. Long enough that no ordinary background
     * job (an e-mail, a report, an image) is cut short, and a task that needs longer gets its own
     * entry; short enough that a handler hung on a read without a timeout, or a deadlock, gives its
     * slot back within a quarter of an hour instead of never (AWS Lambda caps a run at the same 15 min).
     */
    public static final Duration DEFAULT_TASK_TIMEOUT = Duration.ofMinutes(15);

    /** The production defaults, documented on each field. */
    public static final WorkerSettings DEFAULTS = new WorkerSettings(
            List.of(QueueName.DEFAULT), 4, 10, Duration.ofSeconds(30), Optional.empty(), Duration.ofSeconds(1),
            true, true, Duration.ofSeconds(1), 1000, Duration.ofSeconds(30), Map.of(),
            Optional.of(DEFAULT_TASK_TIMEOUT), Optional.empty(), Duration.ofSeconds(5));

    /**
     * The shape before {@code defaultTaskTimeout} existed, kept for callers that build settings field by
     * field: tasks absent from {@code taskTimeouts} get no timeout, as they did then.
     */
    public WorkerSettings(List<QueueName> queues, int concurrency, int claimBatchSize, Duration lease,
            Optional<Duration> heartbeatInterval, Duration pollInterval, boolean listen, boolean maintenanceEnabled,
            Duration maintenanceInterval, int maintenanceBatchLimit, Duration gracePeriod,
            Map<TaskName, Duration> taskTimeouts, Optional<WorkerId> workerId, Duration outageBackoffCap) {
        this(queues, concurrency, claimBatchSize, lease, heartbeatInterval, pollInterval, listen, maintenanceEnabled,
                maintenanceInterval, maintenanceBatchLimit, gracePeriod, taskTimeouts, Optional.empty(), workerId,
                outageBackoffCap);
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

    public WorkerSettings withQueues(List<QueueName> newQueues) {
        return new WorkerSettings(newQueues, concurrency, claimBatchSize, lease, heartbeatInterval, pollInterval,
                listen, maintenanceEnabled, maintenanceInterval, maintenanceBatchLimit, gracePeriod, taskTimeouts,
                defaultTaskTimeout, workerId, outageBackoffCap);
    }

    public WorkerSettings withQueues(QueueName... newQueues) {
        return withQueues(List.of(newQueues));
    }

    public WorkerSettings withConcurrency(int newConcurrency) {
        return new WorkerSettings(queues, newConcurrency, claimBatchSize, lease, heartbeatInterval, pollInterval,
                listen, maintenanceEnabled, maintenanceInterval, maintenanceBatchLimit, gracePeriod, taskTimeouts,
                defaultTaskTimeout, workerId, outageBackoffCap);
    }

    public WorkerSettings withClaimBatchSize(int newClaimBatchSize) {
        return new WorkerSettings(queues, concurrency, newClaimBatchSize, lease, heartbeatInterval, pollInterval,
                listen, maintenanceEnabled, maintenanceInterval, maintenanceBatchLimit, gracePeriod, taskTimeouts,
                defaultTaskTimeout, workerId, outageBackoffCap);
    }

    /** A copy with another lease; an unset heartbeat interval follows it ({@code newLease / 3}). */
    public WorkerSettings withLease(Duration newLease) {
        return new WorkerSettings(queues, concurrency, claimBatchSize, newLease, heartbeatInterval, pollInterval,
                listen, maintenanceEnabled, maintenanceInterval, maintenanceBatchLimit, gracePeriod, taskTimeouts,
                defaultTaskTimeout, workerId, outageBackoffCap);
    }

    public WorkerSettings withHeartbeatInterval(Duration newHeartbeatInterval) {
        return new WorkerSettings(queues, concurrency, claimBatchSize, lease, Optional.of(newHeartbeatInterval),
                pollInterval, listen, maintenanceEnabled, maintenanceInterval, maintenanceBatchLimit, gracePeriod,
                taskTimeouts, defaultTaskTimeout, workerId, outageBackoffCap);
    }

    public WorkerSettings withPollInterval(Duration newPollInterval) {
        return new WorkerSettings(queues, concurrency, claimBatchSize, lease, heartbeatInterval, newPollInterval,
                listen, maintenanceEnabled, maintenanceInterval, maintenanceBatchLimit, gracePeriod, taskTimeouts,
                defaultTaskTimeout, workerId, outageBackoffCap);
    }

    public WorkerSettings withListen(boolean newListen) {
        return new WorkerSettings(queues, concurrency, claimBatchSize, lease, heartbeatInterval, pollInterval,
                newListen, maintenanceEnabled, maintenanceInterval, maintenanceBatchLimit, gracePeriod, taskTimeouts,
                defaultTaskTimeout, workerId, outageBackoffCap);
    }

    public WorkerSettings withMaintenanceEnabled(boolean newMaintenanceEnabled) {
        return new WorkerSettings(queues, concurrency, claimBatchSize, lease, heartbeatInterval, pollInterval,
                listen, newMaintenanceEnabled, maintenanceInterval, maintenanceBatchLimit, gracePeriod, taskTimeouts,
                defaultTaskTimeout, workerId, outageBackoffCap);
    }

    public WorkerSettings withMaintenanceInterval(Duration newMaintenanceInterval) {
        return new WorkerSettings(queues, concurrency, claimBatchSize, lease, heartbeatInterval, pollInterval,
                listen, maintenanceEnabled, newMaintenanceInterval, maintenanceBatchLimit, gracePeriod, taskTimeouts,
                defaultTaskTimeout, workerId, outageBackoffCap);
    }

    public WorkerSettings withMaintenanceBatchLimit(int newMaintenanceBatchLimit) {
        return new WorkerSettings(queues, concurrency, claimBatchSize, lease, heartbeatInterval, pollInterval,
                listen, maintenanceEnabled, maintenanceInterval, newMaintenanceBatchLimit, gracePeriod, taskTimeouts,
                defaultTaskTimeout, workerId, outageBackoffCap);
    }

    public WorkerSettings withGracePeriod(Duration newGracePeriod) {
        return new WorkerSettings(queues, concurrency, claimBatchSize, lease, heartbeatInterval, pollInterval,
                listen, maintenanceEnabled, maintenanceInterval, maintenanceBatchLimit, newGracePeriod, taskTimeouts,
                defaultTaskTimeout, workerId, outageBackoffCap);
    }

    public WorkerSettings withTaskTimeouts(Map<TaskName, Duration> newTaskTimeouts) {
        return new WorkerSettings(queues, concurrency, claimBatchSize, lease, heartbeatInterval, pollInterval,
                listen, maintenanceEnabled, maintenanceInterval, maintenanceBatchLimit, gracePeriod, newTaskTimeouts,
                defaultTaskTimeout, workerId, outageBackoffCap);
    }

    /** A copy with {@code task}'s timeout set (replacing any earlier one) and the others kept. */
    public WorkerSettings withTaskTimeout(TaskName task, Duration timeout) {
        Map<TaskName, Duration> copy = new HashMap<>(taskTimeouts);
        copy.put(Objects.requireNonNull(task, "task"), Objects.requireNonNull(timeout, "timeout"));
        return withTaskTimeouts(copy);
    }

    /** A copy with another timeout for tasks not in {@link #taskTimeouts}; empty: no timeout for them. */
    public WorkerSettings withDefaultTaskTimeout(Optional<Duration> newDefaultTaskTimeout) {
        return new WorkerSettings(queues, concurrency, claimBatchSize, lease, heartbeatInterval, pollInterval,
                listen, maintenanceEnabled, maintenanceInterval, maintenanceBatchLimit, gracePeriod, taskTimeouts,
                newDefaultTaskTimeout, workerId, outageBackoffCap);
    }

    public WorkerSettings withWorkerId(WorkerId newWorkerId) {
        return new WorkerSettings(queues, concurrency, claimBatchSize, lease, heartbeatInterval, pollInterval,
                listen, maintenanceEnabled, maintenanceInterval, maintenanceBatchLimit, gracePeriod, taskTimeouts,
                defaultTaskTimeout, Optional.of(newWorkerId), outageBackoffCap);
    }

    public WorkerSettings withOutageBackoffCap(Duration newOutageBackoffCap) {
        return new WorkerSettings(queues, concurrency, claimBatchSize, lease, heartbeatInterval, pollInterval,
                listen, maintenanceEnabled, maintenanceInterval, maintenanceBatchLimit, gracePeriod, taskTimeouts,
                defaultTaskTimeout, workerId, newOutageBackoffCap);
    }
}
