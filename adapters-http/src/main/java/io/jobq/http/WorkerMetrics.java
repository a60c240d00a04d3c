package io.jobq.http;

import io.jobq.application.port.WakeupChannel;
import io.jobq.application.worker.WorkerListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.jobq.domain.job.Job;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A worker's own health as meters in the registry {@code /metrics} exposes. Knows only the
 * application's ports ({@link WakeupChannel}, {@link WorkerListener}), so the HTTP adapter never
 * depends on the PostgreSQL one. Prometheus names:
 * <ul>
 *   <li>{@code jobq_listener_connected}: 1 while the wake-up listener holds its LISTEN session, else 0
 *       (the worker then lives on its fallback poll: jobs start up to one poll interval late);
 *   <li>{@code jobq_listener_delivering}: 1 while wake-ups are known to arrive (the listener's own test
 *       notification came back), else 0: disconnected, a test still on its way, or one that never came
 *       back, typically because a transaction-mode pooler sits in between (LISTEN "works" there, but
 *       nothing is delivered). Then too the worker lives on its fallback poll;
 *   <li>{@code jobq_listener_reconnects_total}: times the listener re-established LISTEN after losing it;
 *   <li>{@code jobq_listener_failed_attempts}: consecutive failed attempts to establish LISTEN since the
 *       last success, 0 while connected; a growing number means LISTEN cannot work from this worker
 *       (e.g. a transaction-mode pooler in the way);
 *   <li>{@code jobq_maintenance_errors_total}: failed maintenance steps (asking for the upkeep turn, reap,
 *       promote, retention, vacuum);
 *   <li>{@code jobq_worker_store_errors_total{operation}}: failed store calls of the worker loop
 *       (claim, heartbeat, complete, fail);
 *   <li>{@code jobq_task_outcomes_total{queue, task, outcome}}: runs this worker recorded, by what they
 *       came to: {@code done}, {@code retried} (failed, to run again), {@code dead} (failed for good) or
 *       {@code cancelled}; a failed run is one of the last three;
 *   <li>{@code jobq_task_run_seconds{queue, task}}: how long handlers ran (histogram, the worker's clock);
 *   <li>{@code jobq_queue_wait_seconds{queue}}: how long each claimed job waited from when it became due
 *       ({@code run_at}) to its claim ({@code started_at}), both by the database clock (histogram).
 * </ul>
 * The listener meters exist only when the worker listens (a polling-only worker has no listener to
 * watch). Wiring, in bootstrap:
 *
 * <pre>{@code
 * WorkerMetrics metrics = WorkerMetrics.bind(registry, Optional.of(channel)); // Optional.empty() without LISTEN
 * Worker worker = Worker.builder(store, handlers).wakeups(channel).listener(metrics).settings(ws).build();
 * }</pre>
 *
 * <p>Thread-safe: the worker calls it from its own threads.
 */
public final class WorkerMetrics implements WorkerListener {
    /**
     * The most task names the per-task meters tag; runs of any further task are tagged {@value #OTHER_TASK}.
     * Task names come from whoever enqueues (a job of a task this worker has no handler for is still
     * claimed, fails and is recorded), so without a bound every new name would add a series and a histogram.
     */
    static final int MAX_TASK_LABELS = 100;
    static final String OTHER_TASK = "_other";

    private final Counter maintenanceErrors;
    private final MeterRegistry registry;
    private final java.util.Set<String> taskLabels = java.util.concurrent.ConcurrentHashMap.newKeySet();

    private WorkerMetrics(MeterRegistry registry) {
        this.registry = registry;
        this.maintenanceErrors = Counter.builder("jobq.maintenance.errors")
                .description("Maintenance passes (reap expired leases, promote due jobs) that failed")
                .register(registry);
    }

    /**
     * Registers the worker's meters in {@code registry}; pass the result to
     * {@code Worker.Builder#listener}.
     *
     * @param wakeups the worker's wake-up channel, empty when it does not listen
     */
    public static WorkerMetrics bind(MeterRegistry registry, Optional<WakeupChannel> wakeups) {
        Objects.requireNonNull(registry, "registry");
        Objects.requireNonNull(wakeups, "wakeups");
        wakeups.ifPresent(channel -> {
            Gauge.builder("jobq.listener.connected", channel, c -> c.isConnected() ? 1 : 0)
                    .description("1 while the wake-up listener holds its LISTEN session, 0 while the worker only polls")
                    .strongReference(true)
                    .register(registry);
            Gauge.builder("jobq.listener.delivering", channel, c -> c.isDelivering() ? 1 : 0)
                    .description("1 while the listener's own test notification comes back, 0 while the worker only polls")
                    .strongReference(true)
                    .register(registry);
            FunctionCounter.builder("jobq.listener.reconnects", channel, WakeupChannel::reconnects)
                    .description("Times the wake-up listener re-established LISTEN after losing it")
                    .register(registry);
            Gauge.builder("jobq.listener.failed.attempts", channel, WakeupChannel::failedAttempts)
                    .description("Consecutive failed attempts to establish LISTEN since the last success")
                    .register(registry);
        });
        return new WorkerMetrics(registry);
    }

    @Override
    public void claimed(List<Job> jobs) {
        for (Job j : jobs) {
            j.startedAt().ifPresent(started -> recordable(Duration.between(j.runAt(), started)).ifPresent(wait ->
                    Timer.builder("jobq.queue.wait")
                            .description("Time from when a job became due (run_at) to its claim, by the database clock")
                            .tag("queue", j.queue().value()).publishPercentileHistogram().register(registry)
                            .record(wait)));
        }
    }

    @Override
    public void runEnded(Job recorded, Duration ran) {
        String outcome = switch (recorded.state()) {
            case DONE -> "done";
            case SCHEDULED -> "retried";
            case CANCELLED -> "cancelled";
            default -> "dead";
        };
        String task = taskLabel(recorded.task().value());
        Counter.builder("jobq.task.outcomes").description("Runs recorded by this worker, by what they came to")
                .tag("queue", recorded.queue().value()).tag("task", task).tag("outcome", outcome)
                .register(registry).increment();
        Timer.builder("jobq.task.run").description("How long handlers ran, by the worker's clock")
                .tag("queue", recorded.queue().value()).tag("task", task).publishPercentileHistogram()
                .register(registry).record(ran);
    }

    /** {@code task} while fewer than {@link #MAX_TASK_LABELS} names are in use (it may overshoot by a racing few), else {@value #OTHER_TASK}. */
    private String taskLabel(String task) {
        if (taskLabels.contains(task)) return task;
        if (taskLabels.size() >= MAX_TASK_LABELS) return OTHER_TASK;
        taskLabels.add(task);
        return task;
    }

    /** The longest duration a timer can record: its nanoseconds must fit a long (about 292 years). */
    private static final Duration LONGEST = Duration.ofNanos(Long.MAX_VALUE);

    /**
     * A queue wait as a timer records it: never negative; empty when it is longer than a timer can hold, as
     * for a run_at of -infinity written by hand (read as {@link java.time.OffsetDateTime#MIN}), which would
     * otherwise make the timer throw, or skew its max and mean if clamped.
     */
    static Optional<Duration> recordable(Duration d) {
        if (d.compareTo(LONGEST) > 0) return Optional.empty();
        return Optional.of(d.isNegative() ? Duration.ZERO : d);
    }

    @Override
    public void maintenanceError(RuntimeException e) {
        maintenanceErrors.increment();
    }

    @Override
    public void storeError(String operation, RuntimeException e) {
        Counter.builder("jobq.worker.store.errors").description("Failed store calls of the worker loop")
                .tag("operation", operation).register(registry).increment();
    }
}
