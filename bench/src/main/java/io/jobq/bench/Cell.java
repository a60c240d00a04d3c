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
     * Like {@link #measure}, for two experiments at once, run after run: each run of {@code first} is paired
     * with the same run of {@code second} (when given), made at once before or after it, so a ratio of the
     * two compares runs seconds apart, not two experiments a quarter of an hour apart on a machine whose
     * speed drifts. Which of a pair goes first alternates from one pair to the next, across cells: the run
     * right after a reset and a fresh enqueue meets a different server (checkpoint, WAL, buffers) than the one
     * after it, and a fixed order would hand that to one side every time. An odd run count cannot balance a
     * cell: with 3 runs each cell has 2 pairs of one order and 1 of the other, the majority order changing
     * from cell to cell, so an order effect no longer favours one side across the table, but may still tilt
     * single cells.
     *
     * <p>First come {@link Plan#throughputWarmUps()} rounds of uncounted runs, every strategy once at the
     * largest worker count, both experiments: the cells measure a warmed JVM, as a long-running worker is.
     */
    static Paired measurePaired(Plan plan, Progress progress, String whatFirst, Run first, String whatSecond, Run second) {
        for (int round = 1; round <= plan.throughputWarmUps(); round++) {
            for (ClaimStrategy s : ClaimStrategy.values()) {
                warmUp(first, s, plan.warmUpWorkers(), progress, whatFirst, round, plan.throughputWarmUps());
                if (second != null) warmUp(second, s, plan.warmUpWorkers(), progress, whatSecond, round, plan.throughputWarmUps());
            }
        }
        List<Cell> firstCells = new ArrayList<>();
        List<Cell> secondCells = new ArrayList<>();
        int pairs = 0;
        for (ClaimStrategy s : ClaimStrategy.values()) {
            for (int w : plan.workerCounts()) {
                Tally a = new Tally();
                Tally b = new Tally();
                for (int r = 1; r <= plan.runs(); r++) {
                    boolean secondFirst = second != null && pairs++ % 2 == 1;
                    if (secondFirst) b.run(second, s, w, progress, whatSecond, r, plan.runs());
                    a.run(first, s, w, progress, whatFirst, r, plan.runs());
                    if (second != null && !secondFirst) b.run(second, s, w, progress, whatSecond, r, plan.runs());
                }
                firstCells.add(a.cell(s, w));
                if (second != null) secondCells.add(b.cell(s, w));
            }
        }
        return new Paired(firstCells, secondCells);
    }

    private static void warmUp(Run run, ClaimStrategy s, int w, Progress progress, String what, int round, int rounds) {
        double rate = run.once(s, w, new AtomicLong(), new AtomicLong());
        progress.step(what + ", warm-up %d/%d (not counted): %s jobs/s", s.label, w, round, rounds, Format.rate(rate));
    }

    /**
     * {@code ours} as a fraction of {@code floor}, cells measured side by side ({@link #measurePaired}): the
     * median of the pairs' ratios, each dividing two runs made together, so the machine's drift from one
     * pair to the next (the floor of one cell moved by half within minutes on this machine) cancels in
     * each ratio instead of landing on one side of a ratio of medians. Cells of unequal run counts (not
     * measured in pairs) fall back to the ratio of their medians.
     */
    static double fraction(Cell ours, Cell floor) {
        List<Double> a = ours.runsJobsPerSecond();
        List<Double> b = floor.runsJobsPerSecond();
        if (a.size() != b.size()) return ours.jobsPerSecond() / floor.jobsPerSecond();
        List<Double> ratios = new ArrayList<>();
        for (int i = 0; i < a.size(); i++) {
            if (b.get(i) > 0) ratios.add(a.get(i) / b.get(i));
        }
        return ratios.isEmpty() ? Double.NaN : Percentiles.of(ratios).p50();
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
