package io.jobq.bench;

import java.util.List;

/**
 * One cell of the throughput or floor table: a strategy at a worker count, every run's rate and their
 * median (nearest-rank, the middle run of 3).
 *
 * @param runsJobsPerSecond each run's jobs/s, in run order
 * @param meanJobsPerClaim how many jobs an average claim returned, over all runs
 */
record Cell(ClaimStrategy strategy, int workers, List<Double> runsJobsPerSecond, double meanJobsPerClaim) {
    Cell {
        runsJobsPerSecond = List.copyOf(runsJobsPerSecond);
    }

    /** jobs/s, the median of the runs. */
    double jobsPerSecond() {
        return Percentiles.of(runsJobsPerSecond).p50();
    }
}
