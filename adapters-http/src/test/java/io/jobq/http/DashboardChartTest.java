package io.jobq.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.application.port.FinishedCount;
import io.jobq.domain.job.JobState;
import io.jobq.domain.job.QueueName;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The chart: one bar pair per minute summed over queues, a line only through sampled minutes, nothing outside the window. */
class DashboardChartTest {
    static final Instant NOW = Instant.parse("2026-12-01T12:30:40Z");
    static final Instant MINUTE = Instant.parse("2026-12-01T12:29:00Z");

    @Test
    void barsSumQueuesPerMinuteAndSplitDoneFromFailed() {
        List<FinishedCount> finished = List.of(new FinishedCount(MINUTE, QueueName.of("a"), JobState.DONE, 3),
                new FinishedCount(MINUTE, QueueName.of("b"), JobState.DONE, 4), new FinishedCount(MINUTE, QueueName.of("a"), JobState.DEAD, 1),
                new FinishedCount(MINUTE, QueueName.of("a"), JobState.CANCELLED, 1),
                new FinishedCount(MINUTE.minus(Duration.ofHours(2)), QueueName.of("a"), JobState.DONE, 1_000));

        String svg = DashboardChart.svg(finished, Map.of(), NOW);

        assertThat(svg).contains("<title>7 done</title>").contains("<title>2 dead or cancelled</title>")
                .doesNotContain("1000").doesNotContain("<polyline").doesNotContain("waiting</text>");
        assertThat(svg).as("the scale is the busiest minute").contains(">9/min<");
        assertThat(count(svg, "<rect")).isEqualTo(2);
    }

    @Test
    void theWaitingLineBreaksWhereAMinuteHasNoSample() {
        Map<Instant, Long> waiting = new LinkedHashMap<>();
        waiting.put(MINUTE.minus(Duration.ofMinutes(5)), 10L);
        waiting.put(MINUTE.minus(Duration.ofMinutes(4)), 20L);
        waiting.put(MINUTE, 5L); // minutes -3 to -1 unsampled: no invented values between

        String svg = DashboardChart.svg(List.of(), waiting, NOW);

        assertThat(count(svg, "<polyline")).isEqualTo(2);
        assertThat(count(svg, "<circle")).isEqualTo(3);
        assertThat(svg).contains(">20 waiting<").contains(">12:00 UTC<").contains(">12:30 UTC<");
    }

    private static int count(String text, String what) {
        return (int) Pattern.compile(Pattern.quote(what)).matcher(text).results().count();
    }
}
