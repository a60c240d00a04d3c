package io.jobq.bench;

import java.time.Duration;
import java.util.List;

/**
 * How big each experiment is. {@link #FULL} is the (and the seed's) definition; {@link #QUICK}
 * shrinks every experiment so {@code all --quick} takes under 3 minutes on 2 cores (CI).
 *
 * @param fairBigJobs jobs the noisy tenant enqueues at once. Full: 10,000.
 * @param fairSmallTenants how many small tenants share the submissions. Full: 5.
 * @param fairSmallEvery one small-tenant job is submitted this often, round-robin over them. Full: 100 ms.
 * @param fairWorkers single-slot workers (claim loops). Full: 8.
 * @param fairJobMs how long each job sleeps, in ms. Full: 5.
 * @param throughputJobs no-op jobs per throughput or floor run. Full: 20,000.
 * @param workerCounts the columns of the throughput and floor tables. Full: 1, 2, 4, 8, 16.
 * @param runs runs per throughput/floor cell; the table shows their median. Full: 3.
 * @param throughputBox the longest a throughput, floor or deployment-shape run is timed: a run whose jobs
 *     outlast it counts the jobs done within it, divided by it (the rest are left). Full: 6 s. Why a box: the
 *     per-job rows of a slow-disk day drain ~600 jobs/s, so 20,000 jobs took 33 s a run and 36 of the full
 *     run's 51 minutes (2026-12-01); the budget is 30 minutes. Batched rows finish within it.
 * @param latencyJobs jobs per wake-up mechanism. Full: 60.
 * @param latencyGapMinMs shortest pause between two arrivals, in ms. Full: 200.
 * @param latencyGapMaxMs longest pause between two arrivals, in ms. Full: 1,200.
 * @param chaosJobs jobs the chaos workers must finish. Full: 1,000.
 * @param chaosProcesses worker processes alive at once. Full: 4.
 * @param chaosKillEvery one worker process is SIGKILLed and replaced this often. Full: 1 s.
 * @param chaosJobMs how long each chaos job sleeps after recording its side effect, in ms. Full: 100.
 * @param concurrencies the slots of one worker process (jobq's deployment shape, the peers) and the
 *     concurrent clients of the enqueue experiment. Full: 1, 4, 16.
 * @param peerJobs no-op jobs each system drains per run of the peer comparison. Full: 20,000.
 * @param enqueueJobs jobs per cell of the one-job-per-call enqueue rows. Full: 2,000.
 * @param enqueueBatches batches of 1,000 per cell of the batch enqueue rows (at least one per client). Full: 20.
 * @param growthRows finished rows in the table for the second half of the table-growth experiment. Full: 1,000,000.
 * @param growthJobs no-op jobs drained in each run of the table-growth experiment. Full: 10,000.
 * @param growthPairs pairs of runs (one on each table) of the table-growth experiment; each side's median is
 *     compared. Full: 5: with 3, one run's spread (1,166–1,911 jobs/s on one side in one run, 2026-12-04) moved
 *     the ratio of the medians by a quarter; 5 pairs cost about 30 s more.
 * @param workShareMeasured how long the long-vs-short experiment measures each fairness mode, after its
 *     warm-up. Full: 10 s (the full run must stay under 30 minutes).
 * @param throughputWarmUps rounds of uncounted runs before the throughput and floor cells: each round runs
 *     every claim strategy once at the largest worker count. Full: 2 (about 90 s). Why: a worker's claim path
 *     (jOOQ, pgjdbc, the runtime) is compiled by the JIT over its first ~40 s under load on 2 cores, and the
 *     compiler's threads take CPU from PostgreSQL meanwhile; the floor's loop is a few methods. Unwarmed, the
 *     first cells measured the JIT: JVM CPU per job fell from ~1.1 ms in a worker's first 20 s to ~0.4 ms
 *     after 40 s (16 workers, 2026-12-02). A long-running worker only ever pays it once. Two rounds give
 *     jobq's workers about 36 s of load; in {@code all}, the fairness experiments before them run the same
 *     claim path for about 3 minutes. Quick: 0.
 */
public record Plan(
        int fairBigJobs,
        int fairSmallTenants,
        Duration fairSmallEvery,
        int fairWorkers,
        int fairJobMs,
        int throughputJobs,
        List<Integer> workerCounts,
        int runs,
        Duration throughputBox,
        int latencyJobs,
        int latencyGapMinMs,
        int latencyGapMaxMs,
        int chaosJobs,
        int chaosProcesses,
        Duration chaosKillEvery,
        int chaosJobMs,
        List<Integer> concurrencies,
        int peerJobs,
        int enqueueJobs,
        int enqueueBatches,
        int growthRows,
        int growthJobs,
        int growthPairs,
        Duration workShareMeasured,
        int throughputWarmUps) {

    /** The sizes. */
    public static final Plan FULL = new Plan(10_000, 5, Duration.ofMillis(100), 8, 5,
            20_000, List.of(1, 2, 4, 8, 16), 3, Duration.ofSeconds(6),
            60, 200, 1200,
            1_000, 4, Duration.ofSeconds(1), 100,
            List.of(1, 4, 16), 20_000, 2_000, 20, 1_000_000, 10_000, 5, Duration.ofSeconds(10), 2);

    /** Everything shrunk for CI: same shapes, fewer jobs, one run per cell, three worker counts. */
    public static final Plan QUICK = new Plan(1_000, 5, Duration.ofMillis(100), 8, 5,
            1_000, List.of(1, 4, 16), 1, Duration.ofSeconds(6),
            10, 200, 1200,
            200, 4, Duration.ofSeconds(1), 100,
            List.of(1, 4, 16), 400, 200, 4, 100_000, 500, 1, Duration.ofSeconds(5), 0);

    /**
     * A copy with another throughput/floor size, runs, box and worker counts ({@code --throughput-jobs},
     * {@code --runs}, {@code --throughput-seconds}, {@code --workers}). The report prints the sizes used.
     */
    public Plan withThroughput(int jobs, int newRuns, Duration box, List<Integer> counts) {
        return new Plan(fairBigJobs, fairSmallTenants, fairSmallEvery, fairWorkers, fairJobMs, jobs, counts, newRuns, box,
                latencyJobs, latencyGapMinMs, latencyGapMaxMs, chaosJobs, chaosProcesses, chaosKillEvery, chaosJobMs,
                concurrencies, peerJobs, enqueueJobs, enqueueBatches, growthRows, growthJobs, growthPairs, workShareMeasured,
                throughputWarmUps);
    }

    /** The worker count the throughput and floor warm-ups run at: the largest of {@link #workerCounts}. */
    int warmUpWorkers() {
        return workerCounts.stream().max(Integer::compare).orElseThrow();
    }

    /** How the throughput, floor and deployment runs are timed, for the report: "…; a run is timed … whichever comes first". */
    String throughputTiming() {
        return "a run is timed until its jobs are done or for " + throughputBox.toSeconds() + " s, whichever comes first";
    }

    public Plan {
        workerCounts = List.copyOf(workerCounts);
        concurrencies = List.copyOf(concurrencies);
        if (fairBigJobs < 1 || throughputJobs < 1 || latencyJobs < 1 || chaosJobs < 1 || runs < 1 || peerJobs < 1
                || enqueueJobs < 1 || enqueueBatches < 1 || growthRows < 1 || growthJobs < 1 || growthPairs < 1
                || throughputWarmUps < 0) {
            throw new IllegalArgumentException("every job count and the run count must be >= 1, the warm-ups >= 0");
        }
        if (throughputBox.isNegative() || throughputBox.isZero() || throughputBox.compareTo(Duration.ofHours(1)) > 0) {
            throw new IllegalArgumentException("throughputBox must be 1 s to 1 hour");
        }
        if (concurrencies.isEmpty()) throw new IllegalArgumentException("concurrencies must not be empty");
        if (workerCounts.isEmpty() || workerCounts.stream().anyMatch(w -> w < 1 || w > 64)
                || workerCounts.stream().distinct().count() != workerCounts.size()) {
            throw new IllegalArgumentException("workerCounts must not be empty, each 1-64 and distinct");
        }
        if (latencyGapMinMs < 0 || latencyGapMaxMs < latencyGapMinMs) {
            throw new IllegalArgumentException("latency gaps must satisfy 0 <= min <= max");
        }
    }
}
