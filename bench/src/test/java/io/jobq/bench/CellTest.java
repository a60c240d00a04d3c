package io.jobq.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.OutputStream;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** jobq's runs and the floor's are made side by side, so each fraction divides runs made seconds apart. */
class CellTest {

    @Test
    void eachRunOfTheFirstIsPairedWithTheSameRunOfTheSecondWhichOfThemGoesFirstAlternating() {
        Plan plan = Plan.QUICK.withThroughput(1_000, 3, Duration.ofSeconds(6), List.of(1, 4));
        List<String> calls = new ArrayList<>();
        Cell.Paired p = Cell.measurePaired(plan, new Progress(new PrintStream(OutputStream.nullOutputStream())),
                "a %s %d", (s, w, claims, claimed) -> {
                    calls.add("jobq " + s + " " + w);
                    return 100;
                },
                "b %s %d", (s, w, claims, claimed) -> {
                    calls.add("floor " + s + " " + w);
                    return 200;
                });

        // Pairs alternate across cells too: with 3 runs a cell, the second cell starts with the floor.
        assertThat(calls.subList(0, 12)).containsExactly("jobq WAIT 1", "floor WAIT 1", "floor WAIT 1", "jobq WAIT 1",
                "jobq WAIT 1", "floor WAIT 1", "floor WAIT 4", "jobq WAIT 4", "jobq WAIT 4", "floor WAIT 4",
                "floor WAIT 4", "jobq WAIT 4");
        assertThat(calls).hasSize(ClaimStrategy.values().length * 2 * 3 * 2);
        assertThat(p.first()).hasSize(6).allSatisfy(c -> assertThat(c.jobsPerSecond()).isEqualTo(100));
        assertThat(p.second()).hasSize(6).allSatisfy(c -> assertThat(c.jobsPerSecond()).isEqualTo(200));
    }

    @Test
    void warmUpRoundsRunEveryStrategyAtTheLargestWorkerCountBeforeAnyCellAndAreNotCounted() {
        Plan quick = Plan.QUICK.withThroughput(1_000, 1, Duration.ofSeconds(6), List.of(1, 4));
        Plan plan = new Plan(quick.fairBigJobs(), quick.fairSmallTenants(), quick.fairSmallEvery(), quick.fairWorkers(),
                quick.fairJobMs(), quick.throughputJobs(), quick.workerCounts(), quick.runs(), quick.throughputBox(),
                quick.latencyJobs(), quick.latencyGapMinMs(), quick.latencyGapMaxMs(), quick.chaosJobs(),
                quick.chaosProcesses(), quick.chaosKillEvery(), quick.chaosJobMs(), quick.concurrencies(), quick.peerJobs(),
                quick.enqueueJobs(), quick.enqueueBatches(), quick.growthRows(), quick.growthJobs(), quick.growthPairs(),
                quick.workShareMeasured(), 2);
        List<String> calls = new ArrayList<>();
        int[] n = {0};
        Cell.Paired p = Cell.measurePaired(plan, new Progress(new PrintStream(OutputStream.nullOutputStream())),
                "a %s %d", (s, w, claims, claimed) -> {
                    calls.add("jobq " + s + " " + w);
                    boolean warmUp = ++n[0] <= 2 * ClaimStrategy.values().length;
                    claims.incrementAndGet();
                    claimed.addAndGet(warmUp ? 1 : 10); // warm-ups claim 1 job a claim, counted runs 10
                    return warmUp ? 1 : 100; // and are slow
                },
                "b %s %d", (s, w, claims, claimed) -> {
                    calls.add("floor " + s + " " + w);
                    return 200;
                });

        int warmUpCalls = 2 * ClaimStrategy.values().length * 2;
        assertThat(calls.subList(0, warmUpCalls)).allSatisfy(c -> assertThat(c).endsWith(" 4"));
        assertThat(calls.subList(0, 2)).containsExactly("jobq WAIT 4", "floor WAIT 4");
        assertThat(calls).hasSize(warmUpCalls + ClaimStrategy.values().length * 2 * 2);
        assertThat(p.first()).allSatisfy(c -> {
            assertThat(c.runsJobsPerSecond()).containsExactly(100.0);
            assertThat(c.meanJobsPerClaim()).isEqualTo(10.0);
        });
        assertThat(Report.warmUps(plan)).isEqualTo("; after 2 warm-up round(s) of every strategy at 4 workers, not counted (JIT)");
        assertThat(Report.warmUps(quick)).isEqualTo("; no warm-up");
    }

    @Test
    void theFractionIsTheMedianOfThePairsRatiosNotTheRatioOfTheMedians() {
        // Pairs (jobq/floor): 90/100, 200/400, 95/100 -> ratios 0.9, 0.5, 0.95 -> median 0.9.
        // The ratio of the medians would be 95/100 = 0.95: it ignores which runs were made together.
        Cell ours = new Cell(ClaimStrategy.SKIP_LOCKED, 4, List.of(90.0, 200.0, 95.0), 1);
        Cell floor = new Cell(ClaimStrategy.SKIP_LOCKED, 4, List.of(100.0, 400.0, 100.0), 1);
        assertThat(Cell.fraction(ours, floor)).isEqualTo(0.9);
        assertThat(Cell.fraction(new Cell(ClaimStrategy.SKIP_LOCKED, 4, List.of(50.0), 1), floor)).isEqualTo(0.5);
        // A floor run of 0 jobs/s divides nothing: that pair is left out, and a cell of only such pairs has no fraction.
        Cell zero = new Cell(ClaimStrategy.SKIP_LOCKED, 4, List.of(0.0), 1);
        assertThat(Cell.fraction(new Cell(ClaimStrategy.SKIP_LOCKED, 4, List.of(50.0), 1), zero)).isNaN();
        assertThat(Report.fractionTable(List.of(new Cell(ClaimStrategy.SKIP_LOCKED, 4, List.of(50.0), 1)), List.of(zero), List.of(4)))
                .doesNotContain("%");
    }
}
