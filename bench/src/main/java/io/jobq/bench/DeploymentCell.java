package io.jobq.bench;

import java.util.List;

/**
 * One cell of the deployment-shape table: ONE jobq worker with {@code concurrency} slots,
 * {@code prefetch} and {@code claimBatch} ({@link OneWorker}), every run's rate and their median.
 *
 * @param meanJobsPerClaim how many jobs an average claim returned, over all runs
 */
record DeploymentCell(int concurrency, int prefetch, int claimBatch, List<Double> runsJobsPerSecond, double meanJobsPerClaim) {
    DeploymentCell {
        runsJobsPerSecond = List.copyOf(runsJobsPerSecond);
    }

    /** The table row this cell belongs to: the launcher flags it ran with, beside the defaults. */
    String shape() {
        return "one worker, --concurrency c" + (prefetch == 0 ? "" : " --prefetch " + prefetch)
                + (claimBatch == OneWorker.CLAIM_BATCH ? "" : " --claim-batch " + claimBatch);
    }

    /** jobs/s, the median of the runs. */
    double jobsPerSecond() {
        return Percentiles.of(runsJobsPerSecond).p50();
    }
}
