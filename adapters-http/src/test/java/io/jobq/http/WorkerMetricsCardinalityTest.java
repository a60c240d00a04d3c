package io.jobq.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.JobState;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.tenant.TenantId;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.Optional;
import java.util.OptionalDouble;
import org.junit.jupiter.api.Test;

/**
 * Task names are chosen by whoever enqueues: a worker claims a job of any task on its queues (one it has no
 * handler for fails "no handler" and is recorded all the same). Random names must not grow the worker's
 * registry without bound: each new task label costs a counter and a percentile histogram.
 */
class WorkerMetricsCardinalityTest {
    static Job dead(String task) {
        Instant t = Instant.parse("2026-01-01T00:00:00Z");
        return new Job(JobId.of(1), TenantId.of("acme"), QueueName.DEFAULT, TaskName.of(task), "{}", Optional.empty(),
                JobState.DEAD, OptionalDouble.empty(), t, 1, 1, Optional.empty(), Optional.of("no handler"), Optional.empty(),
                t, Optional.of(t), Optional.of(t), false, 0);
    }

    @Test
    void randomTaskNamesFromEnqueuersDoNotGrowTheMetersWithoutBound() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        WorkerMetrics metrics = WorkerMetrics.bind(registry, Optional.empty());
        for (int i = 0; i < 5_000; i++) metrics.runEnded(dead("attacker-" + i), Duration.ofMillis(1));

        long taskMeters = registry.getMeters().stream().map(Meter::getId).filter(id -> id.getName().startsWith("jobq.task.")).count();
        assertThat(taskMeters).as("per-task meters after 5,000 distinct task names").isLessThanOrEqualTo(2L * 200);
        double runs = registry.get("jobq.task.outcomes").counters().stream().mapToDouble(c -> c.count()).sum();
        assertThat(runs).as("every run still counted").isEqualTo(5_000);
    }

    @Test
    void aQueueWaitTooLongForATimerIsLeftOutNotClampedAndANegativeOneIsZero() {
        Instant now = Instant.parse("2026-12-02T00:00:00Z");
        // a run_at of -infinity reads as OffsetDateTime.MIN
        assertThat(WorkerMetrics.recordable(Duration.between(OffsetDateTime.MIN.toInstant(), now))).isEmpty();
        assertThat(WorkerMetrics.recordable(Duration.ofMillis(-5))).contains(Duration.ZERO);
        assertThat(WorkerMetrics.recordable(Duration.ofMillis(7))).contains(Duration.ofMillis(7));
    }
}
