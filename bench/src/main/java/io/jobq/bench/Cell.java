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
        return measurePaired(plan, progress, what, run, null, null).first();
    }

    /** Two experiments' cells, measured side by side. */
    record Paired(List<Cell> first, List<Cell> second) {}

    /**
     * Like {@link #measure}, for two experiments at once, run after run: each run of {@code first} is
     * followed at once by the same run of {@code second} (when given), so a ratio of the two compares runs
     * minutes apart at most, not two experiments a quarter of an hour apart on a machine whose speed drifts.
     */
    static Paired measurePaired(Plan plan, Progress progress, String whatFirst, Run first, String whatSecond, Run second) {
        List<Cell> firstCells = new ArrayList<>();
        List<Cell> secondCells = new ArrayList<>();
        for (ClaimStrategy s : ClaimStrategy.values()) {
            for (int w : plan.workerCounts()) {
                Tally a = new Tally();
                Tally b = new Tally();
                for (int r = 1; r <= plan.runs(); r++) {
                    a.run(first, s, w, progress, whatFirst, r, plan.runs());
                    if (second != null) b.run(second, s, w, progress, whatSecond, r, plan.runs());
                }
                firstCells.add(a.cell(s, w));
                if (second != null) secondCells.add(b.cell(s, w));
            }
        }
        return new Paired(firstCells, secondCells);
    }

    /** One cell's runs so far. */
    private static final class Tally {
        final List<Double> rates = new ArrayList<>();
        final AtomicLong claims = new AtomicLong();
        final AtomicLong claimed = new AtomicLong();

        void run(Run run, ClaimStrategy s, int w, Progress progress, String what, int r, int runs) {
            double rate = run.once(s, w, claims, claimed);
            rates.add(rate);
            progress.step(what + ", run %d/%d: %s jobs/s", s.label, w, r, runs, Format.rate(rate));
        }

        Cell cell(ClaimStrategy s, int w) {
            return new Cell(s, w, rates, claims.get() == 0 ? 0 : (double) claimed.get() / claims.get());
        }
    }
}
