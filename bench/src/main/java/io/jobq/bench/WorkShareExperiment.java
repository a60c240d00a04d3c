package io.jobq.bench;

import io.jobq.application.port.NewJobBatch;
import io.jobq.application.worker.HandlerRegistry;
import io.jobq.application.worker.JobHandler;
import io.jobq.application.worker.WorkerListener;
import io.jobq.application.worker.WorkerSettings;
import io.jobq.domain.fairness.Fairness;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.tenant.TenantId;
import io.jobq.postgres.PostgresJobStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Experiment 1b, long vs short jobs: tenant {@code long} has a backlog of jobs that each sleep
 * {@link #LONG_MS} ms, tenant {@code short} one of jobs that sleep {@link #SHORT_MS} ms; one worker with
 * {@link #SLOTS} slots drains them, once with the queue charging per job ({@code "jobs"}) and once by
 * measured run time ({@code "work"}). What each tenant got is worker time: the handlers' own run times
 * (monotonic clock), summed per tenant over the runs that started after a {@link #WARM_UP} (while the
 * tenants' run-time averages form) and ended within {@link Plan#workShareMeasured()}.
 */
record WorkShareExperiment(BenchDatabase db, Plan plan, Progress progress) {
    static final int LONG_MS = 40;
    static final int SHORT_MS = 4;
    static final int SLOTS = 2;
    static final Duration WARM_UP = Duration.ofSeconds(3);
    static final TenantId LONG = TenantId.of("long");
    static final TenantId SHORT = TenantId.of("short");

    /**
     * @param longMs worker time tenant {@code long} got in the measured window, ms
     * @param shortMs worker time tenant {@code short} got, ms
     */
    record Result(Fairness fairness, double longMs, double shortMs, long longJobs, long shortJobs) {
        /** long : short worker time; 1 is an equal share. */
        double ratio() {
            return longMs / shortMs;
        }
    }

    List<Result> run() {
        return List.of(run(Fairness.JOBS), run(Fairness.WORK));
    }

    private Result run(Fairness fairness) {
        db.reset();
        PostgresJobStore control = new PostgresJobStore(db.control());
        control.configureQueue(QueueName.DEFAULT, fairness);
        // Enough that neither backlog runs dry: at most every slot on one tenant for the whole run.
        double seconds = (WARM_UP.plus(plan.workShareMeasured()).toMillis() / 1000.0) * SLOTS * 1.2;
        enqueue(control, LONG, "sleep_long", (int) (seconds * 1000 / LONG_MS) + 1);
        enqueue(control, SHORT, "sleep_short", (int) (seconds * 1000 / SHORT_MS) + 1);

        long start = System.nanoTime();
        long from = start + WARM_UP.toNanos();
        long until = from + plan.workShareMeasured().toNanos();
        AtomicLong longNanos = new AtomicLong();
        AtomicLong shortNanos = new AtomicLong();
        AtomicLong longJobs = new AtomicLong();
        AtomicLong shortJobs = new AtomicLong();
        HandlerRegistry handlers = new HandlerRegistry()
                .register(TaskName.of("sleep_long"), sleeper(LONG_MS, from, until, longNanos, longJobs))
                .register(TaskName.of("sleep_short"), sleeper(SHORT_MS, from, until, shortNanos, shortJobs));
        WorkerSettings settings = WorkerSettings.builder().concurrency(SLOTS).build();
        try (WorkerGroup workers = new WorkerGroup(db, "work-share-" + fairness.wireName(), 1, SLOTS + 3,
                PostgresJobStore.Options.DEFAULTS, handlers, settings, new WorkerListener() {})) {
            workers.start();
            progress.step("long vs short, %s fairness: one worker with %d slots, %d ms and %d ms jobs, %s warm-up then %s measured",
                    fairness.wireName(), SLOTS, LONG_MS, SHORT_MS, Format.seconds(WARM_UP.toMillis() / 1000.0),
                    Format.seconds(plan.workShareMeasured().toMillis() / 1000.0));
            Waits.sleepUntil(until + Duration.ofMillis(200).toNanos());
        }
        Result r = new Result(fairness, longNanos.get() / 1e6, shortNanos.get() / 1e6, longJobs.get(), shortJobs.get());
        progress.step("long vs short, %s fairness: long got %.0f ms of worker time (%d jobs), short %.0f ms (%d jobs): %.2f : 1",
                fairness.wireName(), r.longMs(), r.longJobs(), r.shortMs(), r.shortJobs(), r.ratio());
        return r;
    }

    private static void enqueue(PostgresJobStore store, TenantId tenant, String task, int n) {
        for (int done = 0; done < n; ) {
            int k = Math.min(NewJobBatch.MAX_SIZE, n - done);
            store.enqueueBatch(new NewJobBatch(tenant, QueueName.DEFAULT, TaskName.of(task), Collections.nCopies(k, "{}"),
                    Job.DEFAULT_MAX_ATTEMPTS, Duration.ZERO));
            done += k;
        }
    }

    /** Sleeps {@code ms}; a run that started at or after {@code from} and ended by {@code until} counts. */
    private static JobHandler sleeper(int ms, long from, long until, AtomicLong nanos, AtomicLong jobs) {
        return ctx -> {
            long began = System.nanoTime();
            Thread.sleep(ms);
            long ended = System.nanoTime();
            if (began >= from && ended <= until) {
                nanos.addAndGet(ended - began);
                jobs.incrementAndGet();
            }
            return Optional.empty();
        };
    }

    /** Failed checks for CI: work must come near an equal share, jobs must not (it is the wrong variant). */
    static List<String> failedChecks(List<Result> results) {
        List<String> out = new ArrayList<>();
        for (Result r : results) {
            if (r.fairness() == Fairness.WORK && (r.ratio() < 0.75 || r.ratio() > 1.33)) {
                out.add("long vs short: work fairness gave long : short worker time " + String.format(java.util.Locale.ROOT, "%.2f", r.ratio())
                        + ", outside 0.75-1.33");
            }
            if (r.fairness() == Fairness.JOBS && r.ratio() < 4) {
                out.add("long vs short: jobs fairness gave long : short worker time " + String.format(java.util.Locale.ROOT, "%.2f", r.ratio())
                        + ", not the ~10 that charging per job must give (the experiment measures nothing)");
            }
        }
        return out;
    }
}
