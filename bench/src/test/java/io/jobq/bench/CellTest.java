package io.jobq.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.OutputStream;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** jobq's runs and the floor's are made side by side, so each fraction divides runs made minutes apart at most. */
class CellTest {

    @Test
    void eachRunOfTheFirstIsFollowedAtOnceByTheSameRunOfTheSecond() {
        Plan plan = Plan.QUICK.withThroughput(1_000, 2, Duration.ofSeconds(6), List.of(1, 4));
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

        assertThat(calls.subList(0, 6)).containsExactly("jobq WAIT 1", "floor WAIT 1", "jobq WAIT 1", "floor WAIT 1",
                "jobq WAIT 4", "floor WAIT 4");
        assertThat(calls).hasSize(ClaimStrategy.values().length * 2 * 2 * 2);
        assertThat(p.first()).hasSize(6).allSatisfy(c -> assertThat(c.jobsPerSecond()).isEqualTo(100));
        assertThat(p.second()).hasSize(6).allSatisfy(c -> assertThat(c.jobsPerSecond()).isEqualTo(200));
    }
}
