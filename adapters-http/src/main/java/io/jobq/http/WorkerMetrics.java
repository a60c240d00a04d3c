package io.jobq.http;

import io.jobq.application.port.WakeupChannel;
import io.jobq.application.worker.WorkerListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
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
 *   <li>{@code jobq_maintenance_errors_total}: maintenance passes (reap, promote) that failed;
 *   <li>{@code jobq_worker_store_errors_total{operation}}: failed store calls of the worker loop
 *       (claim, heartbeat, complete, fail).
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
    private final Counter maintenanceErrors;
    private final MeterRegistry registry;

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
    public void maintenanceError(RuntimeException e) {
        maintenanceErrors.increment();
    }

    @Override
    public void storeError(String operation, RuntimeException e) {
        Counter.builder("jobq.worker.store.errors").description("Failed store calls of the worker loop")
                .tag("operation", operation).register(registry).increment();
    }
}
