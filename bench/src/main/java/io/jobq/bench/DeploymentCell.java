package io.jobq.bench;

import java.util.List;

/**
 * One cell of the deployment-shape table: ONE jobq worker with {@code concurrency} slots and
 * {@code prefetch} ({@link OneWorker}), every run's rate and their median.
 *
 * @param meanJobsPerClaim how many jobs an average claim returned, over all runs
 */
record DeploymentCell(int concurrency, int prefetch, List<Double> runsJobsPerSecond, double meanJobsPerClaim) {
    DeploymentCell {
        runsJobsPerSecond = List.copyOf(runsJobsPerSecond);
    }

    /** jobs/s, the median of the runs. */
    double jobsPerSecond() {
        return Percentiles.of(runsJobsPerSecond).p50();
    }
}
