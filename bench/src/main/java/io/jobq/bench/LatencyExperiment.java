package io.jobq.bench;

import io.jobq.application.port.EnqueueResult;
import io.jobq.application.port.NewJob;
import io.jobq.application.worker.HandlerRegistry;
import io.jobq.application.worker.WorkerListener;
import io.jobq.application.worker.WorkerSettings;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.tenant.TenantId;
import io.jobq.postgres.PostgresJobStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Experiment 3, pickup latency: one idle single-slot worker; {@link Plan#latencyJobs()} jobs arrive
 * one at a time, the pauses between them drawn uniformly from [{@link Plan#latencyGapMinMs()},
 * {@link Plan#latencyGapMaxMs()}] ms by a seeded {@link Random} ({@link #arrivals}: the same arrivals for every
 * run). Measured once with LISTEN/NOTIFY (and the default 1 s fallback poll), then the
 * {@link PickupFloor} (which the report sets LISTEN/NOTIFY beside), then once polling every 1 s with LISTEN off.
 *
 * <p>One clock: this JVM's {@link System#nanoTime()}. A sample runs from just before the enqueue call
 * (so it includes the enqueue's own commit) to the first line of the handler on the worker, which
 * runs in this same JVM. {@value #WARM_UP} warm-up jobs, enqueued one by one and run, come first and are
 * not counted: they load the classes and let the JIT compile the enqueue and claim paths, as in a worker
 * (and a producer) that has been up for a while. Three jobs, as before, left those paths interpreted, which
 * measured the JIT, not the wake-up: about 13 ms against about 7 ms warm on the same machine.
 */
final class LatencyExperiment {
    static final TaskName MARK = TaskName.of("bench_mark");
    static final int WARM_UP = 1000;
    static final String LISTEN = "LISTEN/NOTIFY";

    /** @param latencyMs enqueue-to-start of every measured job, ms */
    record Result(String mechanism, Percentiles latencyMs) {}

    private final BenchDatabase db;
    private final Plan plan;
    private final Progress progress;
    private final long seed;
    private RuntimeException floorFailure;

    LatencyExperiment(BenchDatabase db, Plan plan, Progress progress, long seed) {
        this.db = db;
        this.plan = plan;
        this.progress = progress;
        this.seed = seed;
    }

    /**
     * jobq with LISTEN/NOTIFY, then the {@link PickupFloor} at once (the two on the machine as it is then), then
     * jobq polling every 1 s. A floor that fails leaves jobq's rows; {@link #floorFailure} has what it threw.
     */
    List<Result> run() {
        List<Result> results = new ArrayList<>();
        results.add(run(LISTEN, true));
        try {
            results.add(new PickupFloor(db, plan, progress, seed).run());
        } catch (RuntimeException e) {
            floorFailure = e;
            progress.step("latency floor FAILED: %s", e.getMessage());
        }
        results.add(run("polling every 1 s", false));
        return List.copyOf(results);
    }

    /** One arrival: enqueues a job and returns its key. */
    @FunctionalInterface
    interface Arrival<K, E extends Exception> {
        K enqueue() throws E;
    }

    /**
     * The measured arrivals, the same for every run with this {@code seed}: {@link Plan#latencyJobs()} calls of
     * {@code arrival}, each after a pause drawn uniformly from [{@link Plan#latencyGapMinMs()},
     * {@link Plan#latencyGapMaxMs()}] ms.
     *
     * @return each job's key, with {@link System#nanoTime()} just before its enqueue
     */
    static <K, E extends Exception> Map<K, Long> arrivals(Plan plan, long seed, Arrival<K, E> arrival) throws E {
        Random gaps = new Random(seed);
        Map<K, Long> enqueued = new ConcurrentHashMap<>();
        for (int i = 0; i < plan.latencyJobs(); i++) {
            int gap = plan.latencyGapMinMs() + gaps.nextInt(plan.latencyGapMaxMs() - plan.latencyGapMinMs() + 1);
            Waits.sleep(Duration.ofMillis(gap));
            long before = System.nanoTime();
            enqueued.put(arrival.enqueue(), before);
        }
        return enqueued;
    }

    /** A {@link BenchDatabase#checkpoint} before each measured pickup run; says so when it could not. */
    static void settle(BenchDatabase db, Progress progress) {
        if (!db.checkpoint()) progress.step("latency: CHECKPOINT refused (not superuser or pg_checkpoint); measuring anyway");
    }

    /** What the pickup floor threw in {@link #run}, if it failed. */
    Optional<RuntimeException> floorFailure() {
        return Optional.ofNullable(floorFailure);
    }

    private Result run(String mechanism, boolean listen) {
        db.reset();
        settle(db, progress);
        Map<JobId, Long> started = new ConcurrentHashMap<>();
        HandlerRegistry handlers = new HandlerRegistry().register(MARK, ctx -> {
            started.putIfAbsent(ctx.jobId(), System.nanoTime());
            return Optional.empty();
        });
        WorkerSettings settings = WorkerSettings.builder().concurrency(1).claimBatchSize(1)
                .listen(listen).pollInterval(Duration.ofSeconds(1)).build();
        PostgresJobStore client = new PostgresJobStore(db.control());
        List<Double> samples = new ArrayList<>();
        try (WorkerGroup worker = new WorkerGroup(db, "latency-" + (listen ? "listen" : "poll"), 1, 3,
                PostgresJobStore.Options.DEFAULTS, handlers, settings, WorkerListener.NONE)) {
            worker.start();
            for (int i = 0; i < WARM_UP; i++) enqueue(client);
            Waits.until(() -> started.size() >= WARM_UP, Duration.ofMillis(20), Duration.ofSeconds(60), "the warm-up jobs");
            progress.step("latency %s: worker warmed up; %d jobs arriving %d-%d ms apart (seed %d)", mechanism,
                    plan.latencyJobs(), plan.latencyGapMinMs(), plan.latencyGapMaxMs(), seed);
            Map<JobId, Long> enqueued = arrivals(plan, seed, () -> enqueue(client));
            Waits.until(() -> started.keySet().containsAll(enqueued.keySet()), Duration.ofMillis(20),
                    Duration.ofSeconds(30), "every latency job to start");
            enqueued.forEach((id, before) -> samples.add((started.get(id) - before) / 1e6));
        }
        Result r = new Result(mechanism, Percentiles.of(samples));
        progress.step("latency %s: p50 %s, p95 %s, max %s", mechanism, Format.millis(r.latencyMs().p50()),
                Format.millis(r.latencyMs().p95()), Format.millis(r.latencyMs().max()));
        return r;
    }

    private static JobId enqueue(PostgresJobStore client) {
        EnqueueResult r = client.enqueue(NewJob.of(TenantId.of("latency"), QueueName.DEFAULT, MARK, "{}"));
        return switch (r) {
            case EnqueueResult.Created c -> c.job().id();
            case EnqueueResult.Existing e -> e.job().id();
        };
    }
}
