package io.jobq.http;

import io.jobq.application.port.Backlog;
import io.jobq.application.port.CapUsage;
import io.jobq.application.port.JobQueueException;
import io.jobq.application.port.JobStore;
import io.jobq.application.port.VacuumHealth;
import io.jobq.domain.job.JobState;
import io.jobq.domain.job.QueueName;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * jobq's own meters. Prometheus names (Micrometer's dots become underscores, units and _total are appended):
 * <ul>
 *   <li>{@code jobq_jobs{queue,status}}: jobs per queue and status, all seven statuses per known queue
 *       (done and dead may be estimates on large tables, see {@link JobStore#countsByQueueAndState()});
 *   <li>{@code jobq_oldest_runnable_age_seconds{queue}}: how long the oldest queued job of each queue with
 *       queued jobs has been runnable;
 *   <li>{@code jobq_tenant_backlog{queue,tenant}}: queued jobs of the N largest (queue, tenant) backlogs;
 *   <li>{@code jobq_tenant_running{queue,tenant}}, {@code jobq_tenant_held{queue,tenant}} and
 *       {@code jobq_tenant_max_running{queue,tenant}}: for each tenant with a cap (up to the same N), its
 *       running jobs, its jobs held back by the cap, and the cap;
 *   <li>{@code jobq_enqueued_total{queue}}: jobs created through this API (an idempotent repeat creates none);
 *   <li>{@code jobq_metrics_refresh_failures_total}: scrapes whose store gauges could not be read;
 *   <li>{@code jobq_http_server_requests_seconds{method,route,status}}: request timings;
 *   <li>the cleanup gauges of {@link VacuumGauges} ({@code jobq_xmin_horizon_age_seconds{source}},
 *       {@code jobq_table_dead_tuples{table}}, ...).
 * </ul>
 *
 * <p>The store-derived gauges are read by {@link #refreshIfStale()} (five store reads), which the
 * {@code /metrics} handler calls before each scrape; results are reused for {@code metricsMaxAge}, so
 * several scrapers (or a scrape storm) cost the database at most one round of queries per period instead
 * of one query per gauge per scrape.
 */
final class JobMetrics {
    private static final Logger log = LoggerFactory.getLogger(JobMetrics.class);
    private static final List<JobState> STATES = List.of(JobState.values());

    private final JobStore store;
    private final MeterRegistry registry;
    private final HttpSettings settings;
    private final MultiGauge jobs;
    private final MultiGauge oldestAge;
    private final MultiGauge backlogs;
    private final MultiGauge capRunning;
    private final MultiGauge capHeld;
    private final MultiGauge capMax;
    private final VacuumGauges vacuum;
    private final Counter refreshFailures;
    private long refreshedAtNanos;
    private boolean refreshed;

    JobMetrics(JobStore store, MeterRegistry registry, HttpSettings settings) {
        this.store = store;
        this.registry = registry;
        this.settings = settings;
        this.jobs = MultiGauge.builder("jobq.jobs")
                .description("Jobs by queue and status; done and dead may be estimates on large tables")
                .register(registry);
        this.oldestAge = MultiGauge.builder("jobq.oldest.runnable.age")
                .description("Age of the oldest runnable (queued) job per queue")
                .baseUnit("seconds")
                .register(registry);
        this.backlogs = MultiGauge.builder("jobq.tenant.backlog")
                .description("Queued jobs of the largest backlogs by queue and tenant")
                .register(registry);
        this.capRunning = MultiGauge.builder("jobq.tenant.running")
                .description("Running jobs of each tenant with a cap (max_running), by queue and tenant")
                .register(registry);
        this.capHeld = MultiGauge.builder("jobq.tenant.held")
                .description("Jobs held back by their tenant's cap, by queue and tenant")
                .register(registry);
        this.capMax = MultiGauge.builder("jobq.tenant.max.running")
                .description("The cap (max_running) of each capped tenant, by queue and tenant")
                .register(registry);
        this.vacuum = new VacuumGauges(registry);
        this.refreshFailures = Counter.builder("jobq.metrics.refresh.failures")
                .description("Scrapes whose job gauges could not be read from the store")
                .register(registry);
    }

    /** Counts {@code n} jobs created in {@code queue}. */
    void enqueued(QueueName queue, int n) {
        Counter.builder("jobq.enqueued").description("Jobs created through the HTTP API")
                .tag("queue", queue.value()).register(registry).increment(n);
    }

    /** Jobs created through the API of a task no live worker runs on their queue (the answer's warning). */
    void enqueuedUnhandled(QueueName queue, io.jobq.domain.job.TaskName task, int n) {
        Counter.builder("jobq.enqueued.unhandled").description("Jobs created through the HTTP API of a task no live worker runs on their queue")
                .tag("queue", queue.value()).tag("task", task.value()).register(registry).increment(n);
    }

    /** Records one HTTP request; {@code route} is the matched path template, never the raw path (bounded cardinality). */
    void request(String method, String route, int status, float millis) {
        Timer.builder("jobq.http.server.requests").description("HTTP requests served")
                .tags("method", method, "route", route, "status", Integer.toString(status))
                .register(registry).record((long) (millis * 1_000_000L), TimeUnit.NANOSECONDS);
    }

    /**
     * Re-reads the store gauges unless the last read is younger than {@code metricsMaxAge}. When the store
     * cannot be read the gauges are cleared (no stale numbers shown as current) and the failure counted;
     * the scrape still succeeds, so JVM and pool metrics stay visible during a database outage.
     */
    synchronized void refreshIfStale() {
        long now = System.nanoTime();
        if (refreshed && now - refreshedAtNanos < settings.metricsMaxAge().toNanos()) return;
        refreshedAtNanos = now;
        refreshed = true;
        try {
            Map<QueueName, Map<JobState, Long>> counts = store.countsByQueueAndState();
            Map<QueueName, Duration> ages = store.oldestRunnableAge();
            List<Backlog> top = store.largestBacklogs(settings.topBacklogs());
            List<CapUsage> caps = store.capUsage(settings.topBacklogs());
            Optional<VacuumHealth> health = store.vacuumHealth();
            List<MultiGauge.Row<?>> jobRows = new ArrayList<>();
            counts.forEach((queue, byState) -> {
                for (JobState s : STATES) {
                    jobRows.add(MultiGauge.Row.of(Tags.of("queue", queue.value(), "status", s.dbName()), byState.getOrDefault(s, 0L)));
                }
            });
            List<MultiGauge.Row<?>> ageRows = new ArrayList<>();
            ages.forEach((queue, age) -> ageRows.add(MultiGauge.Row.of(Tags.of("queue", queue.value()), age.toMillis() / 1000.0)));
            List<MultiGauge.Row<?>> backlogRows = new ArrayList<>();
            for (Backlog b : top) {
                backlogRows.add(MultiGauge.Row.of(Tags.of("queue", b.queue().value(), "tenant", b.tenant().value()), b.queued()));
            }
            jobs.register(jobRows, true);
            oldestAge.register(ageRows, true);
            backlogs.register(backlogRows, true);
            showCaps(caps);
            vacuum.show(health);
        } catch (JobQueueException e) {
            refreshFailures.increment();
            jobs.register(List.of(), true);
            oldestAge.register(List.of(), true);
            backlogs.register(List.of(), true);
            showCaps(List.of());
            vacuum.show(Optional.empty());
            log.warn("metrics: cannot read job gauges from the store: {}", e.getMessage());
        }
    }

    private void showCaps(List<CapUsage> caps) {
        List<MultiGauge.Row<?>> running = new ArrayList<>();
        List<MultiGauge.Row<?>> held = new ArrayList<>();
        List<MultiGauge.Row<?>> max = new ArrayList<>();
        for (CapUsage c : caps) {
            Tags tags = Tags.of("queue", c.queue().value(), "tenant", c.tenant().value());
            running.add(MultiGauge.Row.of(tags, c.running()));
            held.add(MultiGauge.Row.of(tags, c.held()));
            max.add(MultiGauge.Row.of(tags, c.maxRunning().value()));
        }
        capRunning.register(running, true);
        capHeld.register(held, true);
        capMax.register(max, true);
    }
}
