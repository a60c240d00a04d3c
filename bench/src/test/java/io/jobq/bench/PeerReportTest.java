package io.jobq.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class PeerReportTest {
    private static PeerExperiment.Result ran(String system, int c, double rate) {
        return new PeerExperiment.Result(system, c, Optional.of(new Drain(rate, Double.NaN, 0.1)), Optional.empty());
    }

    private static PeerExperiment.Outcome outcome(PeerExperiment.Result... results) {
        return new PeerExperiment.Outcome(List.of(results), Map.of("db-scheduler 16.7.1", List.of("c=1: threads 1")));
    }

    @Test
    void peerRatiosAreJobqsRateOverEachPeersAtTheSameConcurrency() {
        String text = PeerReport.peers(outcome(ran("jobq (this build)", 1, 1300), ran("db-scheduler 16.7.1", 1, 1000),
                ran("jobq (this build)", 4, 900), ran("db-scheduler 16.7.1", 4, 1200)), Plan.QUICK);
        List<String> ratioRow = text.lines().dropWhile(l -> !l.startsWith("jobq ÷ peer")).skip(1).findFirst().stream().toList();
        assertThat(ratioRow).singleElement().asString().startsWith("db-scheduler 16.7.1").contains("1.30×").contains("0.75×");
        assertThat(text).contains("Settings used:").contains("c=1: threads 1");
    }

    @Test
    void aPeerThatCouldNotRunIsShownAndFailsTheRun() {
        Results r = new Results();
        r.peers = Optional.of(outcome(ran("jobq (this build)", 1, 1300),
                new PeerExperiment.Result("JobRunr 8.7.0", 1, Optional.empty(), Optional.of("no tables"))));
        assertThat(PeerReport.peers(r.peers.get(), Plan.QUICK)).contains("failed");
        assertThat(r.failedChecks()).containsExactly("peers: JobRunr 8.7.0 at concurrency 1 failed: no tables");
    }

    @Test
    void enqueueFractionsDivideEachWayInByItsOwnFloor() {
        List<EnqueueExperiment.Cell> cells = List.of(
                new EnqueueExperiment.Cell(EnqueueExperiment.Path.JOB_CLIENT, 1, 500),
                new EnqueueExperiment.Cell(EnqueueExperiment.Path.FLOOR_ONE, 1, 2000),
                new EnqueueExperiment.Cell(EnqueueExperiment.Path.HTTP_BATCH, 1, 9000),
                new EnqueueExperiment.Cell(EnqueueExperiment.Path.FLOOR_BATCH, 1, 10000));
        String fractions = PeerReport.enqueue(cells, Plan.QUICK).split("As a fraction")[1];
        assertThat(fractions).contains("25%").contains("90%").doesNotContain("floor:");
    }

    @Test
    void growthRatioIsTheGrownTablesMedianOverTheEmptyOnes() {
        GrowthExperiment.Result g = new GrowthExperiment.Result(100_000, List.of(1000.0, 900.0, 1100.0), List.of(850.0), 1.5, 17 << 20);
        assertThat(PeerReport.growth(g, Plan.QUICK)).contains("beside 100,000 done rows (17 MB)").contains("0.85×");
    }

    @Test
    void deploymentShapePutsOneWorkerBesideTheSingleSlotWorkersOfTheSameCount() {
        List<Cell> throughput = List.of(new Cell(ClaimStrategy.SKIP_LOCKED, 4, List.of(800.0), 1),
                new Cell(ClaimStrategy.SKIP_LOCKED_BATCH, 4, List.of(9999.0), 3));
        List<DeploymentCell> one = List.of(new DeploymentCell(4, 0, OneWorker.CLAIM_BATCH, List.of(1300.0, 1200.0, 1250.0), 1.75),
                new DeploymentCell(4, 20, OneWorker.CLAIM_BATCH, List.of(7000.0), 9.5),
                new DeploymentCell(4, 0, 10, List.of(1100.0), 3.25));
        List<String> lines = PeerReport.deployment(one, throughput, Plan.QUICK).lines().toList();
        assertThat(lines).anySatisfy(l -> assertThat(l).startsWith("c single-slot workers, SKIP LOCKED").contains(" 800 ")
                .doesNotContain("9,999"));
        assertThat(lines).anySatisfy(l -> assertThat(l).startsWith("one worker, --concurrency c  ").contains("1,250"));
        assertThat(lines).anySatisfy(l -> assertThat(l).startsWith("one worker, --concurrency c --prefetch 20").contains("7,000"));
        assertThat(lines).anySatisfy(l -> assertThat(l).contains("jobs per claim").contains("1.75"));
        assertThat(lines).anySatisfy(l -> assertThat(l).contains("jobs per claim").contains("9.50"));
        assertThat(lines).anySatisfy(l -> assertThat(l).startsWith("one worker, --concurrency c --claim-batch 10").contains("1,100"));
    }
}
