package io.jobq.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

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

    /** One run of an experiment: jobs/s for a strategy at a worker count, adding to the claim counters. */
    interface Run {
        double once(ClaimStrategy strategy, int workers, AtomicLong claims, AtomicLong claimed);
    }

    /**
     * Every strategy at every worker count of {@code plan}, {@link Plan#runs()} runs each, as the
     * throughput and floor experiments measure them.
     *
     * @param what the experiment and what its workers are, for the progress lines, e.g. "floor %s, %d loop(s)"
     *     (the strategy's label and the worker count fill it)
     */
    static List<Cell> measure(Plan plan, Progress progress, String what, Run run) {
        List<Cell> cells = new ArrayList<>();
        for (ClaimStrategy s : ClaimStrategy.values()) {
            for (int w : plan.workerCounts()) {
                List<Double> rates = new ArrayList<>();
                AtomicLong claims = new AtomicLong();
                AtomicLong claimed = new AtomicLong();
                for (int r = 1; r <= plan.runs(); r++) {
                    double rate = run.once(s, w, claims, claimed);
                    rates.add(rate);
                    progress.step(what + ", run %d/%d: %s jobs/s", s.label, w, r, plan.runs(), Format.rate(rate));
                }
                cells.add(new Cell(s, w, rates, claims.get() == 0 ? 0 : (double) claimed.get() / claims.get()));
            }
        }
        return cells;
    }
}
