package io.jobq.bench;

import io.jobq.application.worker.HandlerRegistry;
import io.jobq.application.worker.WorkerListener;
import io.jobq.application.worker.WorkerSettings;
import io.jobq.domain.job.Job;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * jobq the way users deploy it: ONE worker with {@code --concurrency c} and the launcher's defaults
 * otherwise (claim batch {@value #CLAIM_BATCH}, fair order, SKIP LOCKED), or as docs/benchmarks.md
 * recommends for short jobs, with {@code --prefetch} {@value #THROUGHPUT_PREFETCH}; draining the jobs
 * already queued in the bench database. The throughput experiment's deployment rows, the peer comparison
 * and the table-growth experiment all measure jobq through here, so they measure the same thing.
 */
final class OneWorker {
    /** The launcher's default claim batch ({@code WorkerSettings.DEFAULTS}). */
    static final int CLAIM_BATCH = WorkerSettings.DEFAULTS.claimBatchSize();

    /**
     * The prefetch jobq's docs recommend for throughput of short jobs (docs/operations.md): each claim then
     * takes the free slots plus up to 20 jobs that wait for one.
     */
    static final int THROUGHPUT_PREFETCH = 20;

    private OneWorker() {}

    /**
     * Connections of the worker's pool: the launcher's default of 10 ({@code JOBQ_POOL_SIZE}), or
     * c + 2 where c is larger (a job thread's outcome write, the claim loop, heartbeat and maintenance).
     * The peers get the same pool size at the same concurrency.
     */
    static int poolSize(int concurrency) {
        return Math.max(10, concurrency + 2);
    }

    /** Defaults but the slots, prefetch and claim batch; polling only, since every job is queued before the start. */
    static WorkerSettings settings(int concurrency, int prefetch, int claimBatch) {
        return WorkerSettings.builder().concurrency(concurrency).prefetch(prefetch).claimBatchSize(claimBatch).listen(false).build();
    }

    /** What the report prints as jobq's settings at this concurrency. */
    static String describe(int concurrency, int prefetch) {
        WorkerSettings s = settings(concurrency, prefetch, CLAIM_BATCH);
        return "one Worker, concurrency " + concurrency + ", prefetch " + prefetch + ", claim batch " + s.claimBatchSize()
                + " (min(free slots + prefetch room, batch) per claim), pool " + poolSize(concurrency)
                + ", fair order, SKIP LOCKED, poll " + s.pollInterval().toMillis() + " ms, LISTEN off";
    }

    /** The settings every concurrency shares, for a table that spans several. */
    static String describeShape() {
        WorkerSettings s = WorkerSettings.DEFAULTS;
        return "claim batch " + s.claimBatchSize() + " unless the row says --claim-batch (that row only where c > "
                + ThroughputExperiment.OLD_CLAIM_BATCH + ":\nbelow, a claim"
                + " takes the free slots either way), i.e. min(free slots + prefetch room, batch) per claim;\npool max(10, c + 2);"
                + " fair order; SKIP LOCKED; LISTEN off; the runs go round by round over every row and c";
    }

    /**
     * Drains {@code jobs} queued no-op jobs (the caller enqueued them) with one worker of
     * {@code concurrency} slots, and checks that every job in the table is done afterwards.
     */
    static Drain drain(BenchDatabase db, String name, int concurrency, int prefetch, int jobs) {
        return drain(db, name, concurrency, prefetch, CLAIM_BATCH, jobs, null);
    }

    /**
     * As {@link #drain(BenchDatabase, String, int, int, int)}, with claims of at most {@code claimBatch}, and
     * timed for at most {@code box} (null: no box) from the first job picked up: if the jobs outlast it, the
     * rate is the jobs completed within it ÷ it, and the rest are left queued.
     */
    static Drain drain(BenchDatabase db, String name, int concurrency, int prefetch, int claimBatch, int jobs, Duration box) {
        AtomicLong done = new AtomicLong();
        AtomicLong claims = new AtomicLong();
        AtomicLong claimed = new AtomicLong();
        AtomicLong firstJob = new AtomicLong();
        WorkerListener listener = new WorkerListener() {
            @Override
            public void claimed(List<Job> got) {
                firstJob.compareAndSet(0, System.nanoTime());
                claims.incrementAndGet();
                claimed.addAndGet(got.size());
            }

            @Override
            public void completed(Job job) {
                done.incrementAndGet();
            }
        };
        long start;
        long end;
        long counted = jobs;
        try (WorkerGroup group = new WorkerGroup(db, name, 1, poolSize(concurrency), ClaimStrategy.SKIP_LOCKED.storeOptions(),
                HandlerRegistry.withBuiltIns(), settings(concurrency, prefetch, claimBatch), listener)) {
            start = System.nanoTime();
            group.start();
            if (box != null) {
                Waits.until(() -> done.get() >= jobs || (firstJob.get() != 0 && System.nanoTime() - firstJob.get() >= box.toNanos()),
                        Duration.ofMillis(1), Duration.ofMinutes(15), "jobq " + name + " within its box");
            }
            if (box != null && done.get() < jobs) {
                end = System.nanoTime();
                counted = done.get();
            } else {
                // Both counts use partial indexes, so the check stays cheap with a million done rows beside.
                end = Waits.drained(done::get, jobs, () -> db.queryLong("SELECT (SELECT count(*) FROM jobs WHERE state = 'queued') "
                        + "+ (SELECT count(*) FROM jobs WHERE state = 'running')") == 0, Duration.ofMinutes(15), "jobq " + name);
            }
        }
        Drain.checkDone(db, counted, counted == jobs, "jobq " + name);
        return Drain.timed(counted, start, firstJob.get(), end, claims.get() == 0 ? Double.NaN : (double) claimed.get() / claims.get());
    }
}
