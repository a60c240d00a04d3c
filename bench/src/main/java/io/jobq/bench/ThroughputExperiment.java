package io.jobq.bench;

import io.jobq.application.worker.HandlerRegistry;
import io.jobq.application.worker.WorkerListener;
import io.jobq.application.worker.WorkerSettings;
import io.jobq.domain.job.Job;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Experiment 2, throughput of jobq's own worker runtime: {@link Plan#throughputJobs()} no-op jobs
 * enqueued up front, then W in-process workers (each its own claim loop and its own connection pool)
 * drain them. For each {@link ClaimStrategy} and worker count, {@link Plan#runs()} runs; jobs/s is
 * jobs ÷ (last completion − first claim), by this JVM's monotonic clock, or, when the jobs outlast
 * {@link Plan#throughputBox()}, the jobs completed within it ÷ it. Fair claim order, as in production.
 *
 * <p>A worker of the batch row has 10 slots and a claim batch of 10, which is how jobq is configured
 * to take 10 jobs per claim ({@code --concurrency 10 --claim-batch 10}); the runtime claims
 * {@code min(free slots, 10)}, so the mean jobs per claim is reported too.
 */
record ThroughputExperiment(BenchDatabase db, Plan plan, Progress progress) {

    List<Cell> run() {
        return Cell.measure(plan, progress, PROGRESS, this::runOnce);
    }

    /**
     * This experiment and the floor's, each run of a cell paired with the floor's same run, made at once
     * before or after it ({@link Cell#measurePaired}): the report's "fraction of the floor" divides runs made
     * side by side.
     */
    Cell.Paired runBesideFloor(FloorExperiment floor) {
        return Cell.measurePaired(plan, progress, PROGRESS, this::runOnce, FloorExperiment.PROGRESS, floor::runOnce);
    }

    private static final String PROGRESS = "throughput %s, %d worker(s)";

    /** The launcher's claim batch until 2026-12-02: one claim took at most 10 jobs however many slots were free. */
    static final int OLD_CLAIM_BATCH = 10;

    /**
     * The deployment shape: for each c of {@link Plan#concurrencies()}, ONE worker with c slots (as
     * {@code jobq worker --concurrency c} runs), with the default prefetch (0) and with
     * {@link OneWorker#THROUGHPUT_PREFETCH}, and, where c exceeds it, with the claim batch capped at
     * {@link #OLD_CLAIM_BATCH} (the default before 2026-12-02, kept so the report shows what the cap costs),
     * beside the rows above, where c workers have one slot each. Same jobs and runs as the rows above. The runs go round by round, every
     * shape at every c in each round (as the peers do), so a slow minute of the disk costs every cell alike
     * instead of deciding a comparison between two rows.
     */
    List<DeploymentCell> runDeployment() {
        record Shape(int c, int prefetch, int claimBatch) {}
        List<Shape> shapes = new ArrayList<>(); // in report order
        for (int prefetch : List.of(0, OneWorker.THROUGHPUT_PREFETCH)) {
            for (int c : plan.concurrencies()) shapes.add(new Shape(c, prefetch, OneWorker.CLAIM_BATCH));
        }
        // Only where it differs: with c <= 10 slots and no prefetch a claim takes the free slots either way.
        for (int c : plan.concurrencies()) if (c > OLD_CLAIM_BATCH) shapes.add(new Shape(c, 0, OLD_CLAIM_BATCH));
        List<List<Double>> rates = new ArrayList<>();
        double[] claimed = new double[shapes.size()];
        for (int k = 0; k < shapes.size(); k++) rates.add(new ArrayList<>());
        for (int r = 1; r <= plan.runs(); r++) {
            for (int k = 0; k < shapes.size(); k++) {
                Shape x = shapes.get(k);
                int c = x.c(), prefetch = x.prefetch(), claimBatch = x.claimBatch();
                db.reset();
                NoopJobs.enqueue(db, plan.throughputJobs());
                Drain d = OneWorker.drain(db, "tp-one-" + c + "-" + prefetch + "-" + claimBatch, c, prefetch, claimBatch,
                        plan.throughputJobs(), plan.throughputBox());
                rates.get(k).add(d.jobsPerSecond());
                claimed[k] += d.jobsPerClaim();
                progress.step("throughput one worker, concurrency %d, prefetch %d, claim batch %d, run %d/%d: %s jobs/s, %.2f jobs per claim", c,
                        prefetch, claimBatch, r, plan.runs(), Format.rate(d.jobsPerSecond()), d.jobsPerClaim());
            }
        }
        List<DeploymentCell> cells = new ArrayList<>();
        for (int k = 0; k < shapes.size(); k++) {
            // jobs per claim: the mean of the runs' means (each run drains the same jobs)
            Shape x = shapes.get(k);
            cells.add(new DeploymentCell(x.c(), x.prefetch(), x.claimBatch(), rates.get(k), claimed[k] / plan.runs()));
        }
        return cells;
    }

    private double runOnce(ClaimStrategy s, int workers, AtomicLong claims, AtomicLong claimed) {
        db.reset();
        int n = plan.throughputJobs();
        NoopJobs.enqueueAfresh(db, n);
        CountDownLatch done = new CountDownLatch(n);
        AtomicLong firstClaim = new AtomicLong();
        AtomicBoolean timing = new AtomicBoolean(true);
        WorkerListener listener = new WorkerListener() {
            @Override
            public void claimed(List<Job> jobs) {
                firstClaim.compareAndSet(0, System.nanoTime());
                if (!timing.get()) return; // claims after the box (or given back at close) are not in the mean
                claims.incrementAndGet();
                claimed.addAndGet(jobs.size());
            }

            @Override
            public void completed(Job job) {
                done.countDown();
            }
        };
        // Polling only: every job is queued before the start, so a wake-up has nothing to add, and
        // 16 LISTEN sessions would only take connections.
        WorkerSettings settings = WorkerSettings.builder().concurrency(s.batch).claimBatchSize(s.batch)
                .listen(false).build();
        // Connections per worker: its claim loop and job threads' outcome writes, heartbeat and maintenance.
        // Kept small so 16 workers fit in a default max_connections of 100 next to other users.
        int poolSize = s.batch == 1 ? 2 : 4;
        long start;
        long end;
        long counted;
        try (WorkerGroup group = new WorkerGroup(db, "tp-" + s.name().toLowerCase() + "-" + workers, workers, poolSize,
                s.storeOptions(), HandlerRegistry.withBuiltIns(), settings, listener)) {
            group.start();
            // Timed from the first claim, as the floor's loops are timed from their first (already connected)
            // and the one-worker rows and the peers from their first job: the workers' start-up (threads,
            // announcing, a first maintenance pass) is not queue throughput, and in a short box it would weigh.
            Waits.until(() -> firstClaim.get() != 0, Duration.ofMillis(1), Duration.ofMinutes(1), "the first claim");
            start = firstClaim.get();
            try {
                done.await(start + plan.throughputBox().toNanos() - System.nanoTime(), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new BenchException("interrupted");
            }
            end = System.nanoTime();
            counted = n - done.getCount(); // all n, or those done within the box
            timing.set(false);
        }
        if (counted == 0) throw new BenchException("no job was done within " + plan.throughputBox().toSeconds() + " s");
        Drain.checkDone(db, counted, counted == n, "a throughput run");
        return counted / ((end - start) / 1e9);
    }
}
