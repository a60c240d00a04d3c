package io.jobq.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.postgres.ClaimOrder;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ReportTest {

    @Nested
    class Numbers {
        @ParameterizedTest
        @CsvSource({"4, 4.0 ms", "6.44, 6.4 ms", "37.6, 38 ms", "610, 610 ms", "7110, 7.11 s", "13500, 13.50 s"})
        void spansFollowTheSeedsStyle(double ms, String expected) {
            assertThat(Format.millis(ms)).isEqualTo(expected);
        }

        @Test
        void ratesAreRoundedWithThousandsSeparators() {
            assertThat(Format.rate(1363.4)).isEqualTo("1,363");
            assertThat(Format.rate(166.5)).isEqualTo("167");
            assertThat(Format.percent(0.874)).isEqualTo("87%");
        }
    }

    @Nested
    class Tables {
        @Test
        void padsColumnsNamesLeftNumbersRight() {
            String t = new TextTable("claim strategy", "1 worker", "16").row("FOR UPDATE (blocking)", "166", "208")
                    .row("SKIP LOCKED", "222", "1,363").render();
            assertThat(t).isEqualTo("""
                    claim strategy         1 worker     16
                    FOR UPDATE (blocking)       166    208
                    SKIP LOCKED                 222  1,363
                    """);
        }

        @Test
        void throughputTableHasOneColumnPerWorkerCountAndTheMedianInEachCell() {
            List<Cell> cells = List.of(
                    new Cell(ClaimStrategy.WAIT, 1, List.of(160.0, 166.0, 170.0), 1),
                    new Cell(ClaimStrategy.WAIT, 16, List.of(208.0), 1),
                    new Cell(ClaimStrategy.SKIP_LOCKED, 1, List.of(222.0), 1));
            String t = Report.cellTable(cells, List.of(1, 16));
            assertThat(t.lines().toList()).containsExactly(
                    "claim strategy          1 worker   16",
                    "FOR UPDATE (blocking)        166  208",
                    "FOR UPDATE SKIP LOCKED       222    -");
        }

        @Test
        void fractionTableDividesOursByTheFloorCellByCell() {
            List<Cell> ours = List.of(new Cell(ClaimStrategy.SKIP_LOCKED, 4, List.of(300.0), 1));
            List<Cell> floor = List.of(new Cell(ClaimStrategy.SKIP_LOCKED, 4, List.of(400.0), 1));
            assertThat(Report.fractionTable(ours, floor, List.of(4))).contains("FOR UPDATE SKIP LOCKED").contains("75%");
        }

        @Test
        void pickupSetsListenNotifyBesideItsFloor() {
            Plan plan = Plan.FULL;
            List<LatencyExperiment.Result> results = List.of(
                    new LatencyExperiment.Result(LatencyExperiment.LISTEN, Percentiles.of(5, 6, 9)),
                    new LatencyExperiment.Result("polling every 1 s", Percentiles.of(400, 500, 900)),
                    new LatencyExperiment.Result(PickupFloor.MECHANISM, Percentiles.of(3, 4, 6)));
            String text = Report.latency(results, plan);
            assertThat(text).contains(PickupFloor.MECHANISM + "  4.0 ms")
                    .contains("same arrivals: p50 +2.0 ms (1.50×), p95 +3.0 ms (1.50×)").contains("with 3 samples each");
            assertThat(Report.latency(results.subList(0, 2), plan)).as("no floor measured: no comparison")
                    .doesNotContain("over the floor");
        }
    }

    @Nested
    class Checks {
        private Results results(double fifoP95, double fairP95, long lost, long doneTwice) {
            return results(fifoP95, fairP95, lost, doneTwice, FairnessExperiment.BIG_CAP);
        }

        private Results results(double fifoP95, double fairP95, long lost, long doneTwice, long cappedMostRunning) {
            Results r = new Results();
            r.fairness = List.of(
                    new FairnessExperiment.Result(ClaimOrder.FIFO, Optional.empty(), Percentiles.of(1, fifoP95), 14.6, 8),
                    new FairnessExperiment.Result(ClaimOrder.FAIR, Optional.empty(), Percentiles.of(1, fairP95), 11.2, 8),
                    new FairnessExperiment.Result(ClaimOrder.FAIR, Optional.of(FairnessExperiment.BIG_CAP), Percentiles.of(1, fairP95),
                            40.1, cappedMostRunning));
            r.chaos = Optional.of(new ChaosExperiment.Result(1000, 1000 - lost, 0, lost, 13, 13, doneTwice, 0, 0, 17, 0, 20));
            return r;
        }

        @Test
        void passWhenFairBeatsFifoAndChaosKeptEveryGuarantee() {
            assertThat(results(13_500, 6, 0, 0).failedChecks()).isEmpty();
        }

        @Test
        void failWhenFairIsNotBelowFifoOrAJobIsLostOrDoneTwice() {
            assertThat(results(6, 6, 0, 0).failedChecks()).singleElement().asString().contains("not lower than FIFO");
            assertThat(results(13_500, 6, 1, 0).failedChecks()).singleElement().asString().contains("1 job(s) lost");
            assertThat(results(13_500, 6, 0, 2).failedChecks()).singleElement().asString().contains("done twice");
        }

        @Test
        void failWhenTheCappedFloodWasSeenAboveItsCap() {
            assertThat(results(13_500, 6, 0, 0, FairnessExperiment.BIG_CAP + 1).failedChecks()).singleElement().asString()
                    .contains("capped at " + FairnessExperiment.BIG_CAP).contains("3 jobs running at once");
        }

        @Test
        void anExperimentErrorIsAFailedCheck() {
            Results r = new Results();
            r.errors.put("latency", "timed out");
            assertThat(r.failedChecks()).containsExactly("latency failed: timed out");
        }

        @Test
        void reportStatesThePercentileMethodAndTheMachine() {
            Report.Header h = new Report.Header("quick", "java -jar jobq-bench.jar all --quick", "2026-01-01T00:00:00Z", 90,
                    Map.of("cores", "2"), Map.of("version", "PostgreSQL 15", "fsync", "on"), "jdbc:postgresql://x/jobq_bench",
                    "1.00", "2.00", Plan.QUICK);
            String text = Report.render(h, results(13_500, 6, 0, 0), true);
            assertThat(text).contains("nearest-rank").contains("cores: 2").contains("fsync=on")
                    .contains("total run time: 90.0 s").contains("FIFO (oldest first)").contains("fair (this project)").contains("fair, flood capped at 2")
                    .contains("Checks: passed").contains("Raw runs");
        }

        @Test
        void aRefusedCheckpointIsReportedUnderTheHead() {
            Report.Header h = new Report.Header("quick", "java -jar jobq-bench.jar all --quick", "2026-01-01T00:00:00Z", 90,
                    Map.of("cores", "2"), Map.of("version", "PostgreSQL 15"), "jdbc:postgresql://x/jobq_bench", "1.00", "2.00",
                    Plan.QUICK);
            Results r = results(13_500, 6, 0, 0);
            assertThat(Report.render(h, r, false)).doesNotContain("CHECKPOINT refused");
            r.checkpointsRefused = 3;
            assertThat(Report.render(h, r, false)).contains("CHECKPOINT refused 3 time(s)");
        }
    }
}
