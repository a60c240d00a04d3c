package io.jobq.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The time box of the throughput and floor runs: a run that outlasts it is counted at the box, not at its end. */
class StartingGunTest {

    @Test
    void loopsOutlastingTheBoxAreCountedAtTheBoxAndThenStopped() {
        AtomicLong count = new AtomicLong();
        AtomicBoolean stop = new AtomicBoolean();
        StartingGun.Loop endless = () -> {
            while (!stop.get()) {
                count.incrementAndGet();
                Thread.sleep(1);
            }
        };
        StartingGun.Timed t = StartingGun.timeBoxed("endless", List.of(endless, endless), Duration.ofMillis(200),
                count::get, () -> stop.set(true));

        assertThat(stop).as("stopped at the box").isTrue();
        assertThat(t.nanos()).as("timed over the box, not until the loops ended")
                .isBetween(Duration.ofMillis(200).toNanos(), Duration.ofMillis(1_000).toNanos());
        assertThat(t.count()).as("counted at the box").isPositive().isLessThanOrEqualTo(count.get());
    }

    @Test
    void loopsEndingWithinTheBoxAreTimedToTheirEnd() {
        AtomicLong count = new AtomicLong();
        AtomicBoolean stop = new AtomicBoolean();
        StartingGun.Loop fifty = () -> {
            for (int i = 0; i < 50; i++) count.incrementAndGet();
        };
        StartingGun.Timed t = StartingGun.timeBoxed("short", List.of(fifty, fifty), Duration.ofSeconds(30), count::get,
                () -> stop.set(true));

        assertThat(stop).as("never stopped").isFalse();
        assertThat(t.count()).isEqualTo(100);
        assertThat(t.nanos()).isLessThan(Duration.ofSeconds(30).toNanos());
    }
}
