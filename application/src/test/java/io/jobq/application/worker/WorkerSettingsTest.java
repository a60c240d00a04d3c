package io.jobq.application.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class WorkerSettingsTest {

    @Test
    void defaultsAreTheDocumentedOnes() {
        WorkerSettings d = WorkerSettings.DEFAULTS;

        assertThat(d.queues()).containsExactly(QueueName.DEFAULT);
        assertThat(d.concurrency()).isEqualTo(4);
        assertThat(d.claimBatchSize()).isEqualTo(10);
        assertThat(d.lease()).isEqualTo(Duration.ofSeconds(30));
        assertThat(d.effectiveHeartbeatInterval()).isEqualTo(Duration.ofSeconds(10));
        assertThat(d.pollInterval()).isEqualTo(Duration.ofSeconds(1));
        assertThat(d.listen()).isTrue();
        assertThat(d.maintenanceEnabled()).isTrue();
        assertThat(d.maintenanceInterval()).isEqualTo(Duration.ofSeconds(1));
        assertThat(d.maintenanceBatchLimit()).isEqualTo(1000);
        assertThat(d.gracePeriod()).isEqualTo(Duration.ofSeconds(30));
        assertThat(d.taskTimeouts()).isEmpty();
        assertThat(d.defaultTaskTimeout()).hasValue(Duration.ofMinutes(15));
        assertThat(d.workerId()).isEmpty();
        assertThat(d.outageBackoffCap()).isEqualTo(Duration.ofSeconds(5));
    }

    @Test
    void anUnsetHeartbeatFollowsTheLease() {
        assertThat(WorkerSettings.DEFAULTS.withLease(Duration.ofSeconds(2)).effectiveHeartbeatInterval())
                .isEqualTo(Duration.ofNanos(666_666_666));
    }

    @Test
    void anExplicitHeartbeatIsKept() {
        WorkerSettings s = WorkerSettings.DEFAULTS.withHeartbeatInterval(Duration.ofSeconds(5))
                .withLease(Duration.ofSeconds(60));
        assertThat(s.effectiveHeartbeatInterval()).isEqualTo(Duration.ofSeconds(5));
    }

    @Test
    void theHeartbeatMustBeShorterThanTheLease() {
        assertThatThrownBy(() -> WorkerSettings.DEFAULTS.withHeartbeatInterval(Duration.ofSeconds(30)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("heartbeatInterval must be shorter than lease (PT30S), was PT30S");
    }

    @Test
    void everyProblemIsReportedAtOnce() {
        assertThatThrownBy(() -> new WorkerSettings(List.of(), 0, 1001, Duration.ofMillis(10),
                java.util.Optional.of(Duration.ZERO), Duration.ZERO, true, true, Duration.ofSeconds(-1), 0,
                Duration.ofSeconds(-1), Map.of(TaskName.of("sleep"), Duration.ZERO),
                java.util.Optional.of(Duration.ofSeconds(-5)), java.util.Optional.empty(), Duration.ofMillis(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContainingAll(
                        "queues must name at least one queue",
                        "concurrency must be 1-1000, was 0",
                        "claimBatchSize must be 1-1000, was 1001",
                        "lease must be >= PT0.1S, was PT0.01S",
                        "heartbeatInterval must be positive, was PT0S",
                        "pollInterval must be positive, was PT0S",
                        "maintenanceInterval must be positive, was PT-1S",
                        "maintenanceBatchLimit must be 1-100000, was 0",
                        "gracePeriod must be >= 0, was PT-1S",
                        "taskTimeouts[sleep] must be positive, was PT0S",
                        "defaultTaskTimeout must be positive, was PT-5S",
                        "outageBackoffCap must be >= PT0.1S, was PT0.001S");
    }

    @Test
    void queuesMustBeDistinct() {
        assertThatThrownBy(() -> WorkerSettings.DEFAULTS.withQueues(QueueName.of("a"), QueueName.of("a")))
                .hasMessageContaining("queues must be distinct, was [a, a]");
    }

    @Test
    void aZeroGracePeriodIsAllowed() {
        assertThat(WorkerSettings.DEFAULTS.withGracePeriod(Duration.ZERO).gracePeriod()).isZero();
    }

    @Test
    void taskTimeoutsAccumulate() {
        WorkerSettings s = WorkerSettings.DEFAULTS
                .withTaskTimeout(TaskName.of("sleep"), Duration.ofSeconds(1))
                .withTaskTimeout(TaskName.of("fail"), Duration.ofSeconds(2));

        assertThat(s.timeoutFor(TaskName.of("sleep"))).hasValue(Duration.ofSeconds(1));
        assertThat(s.timeoutFor(TaskName.of("fail"))).hasValue(Duration.ofSeconds(2));
        assertThat(s.timeoutFor(TaskName.of("noop"))).hasValue(WorkerSettings.DEFAULT_TASK_TIMEOUT);
    }

    @Test
    void aTaskWithoutItsOwnTimeoutGetsTheDefaultOneOrNoneWhenTheDefaultIsRemoved() {
        WorkerSettings s = WorkerSettings.DEFAULTS.withTaskTimeout(TaskName.of("sleep"), Duration.ofHours(2))
                .withDefaultTaskTimeout(java.util.Optional.of(Duration.ofSeconds(90)));
        assertThat(s.timeoutFor(TaskName.of("sleep"))).hasValue(Duration.ofHours(2));
        assertThat(s.timeoutFor(TaskName.of("noop"))).hasValue(Duration.ofSeconds(90));

        WorkerSettings unbounded = s.withDefaultTaskTimeout(java.util.Optional.empty());
        assertThat(unbounded.timeoutFor(TaskName.of("noop"))).isEmpty();
        assertThat(unbounded.timeoutFor(TaskName.of("sleep"))).hasValue(Duration.ofHours(2));
    }

    @Test
    void theConstructorWithoutADefaultTimeoutKeepsItsOldMeaningOfNoTimeout() {
        WorkerSettings d = WorkerSettings.DEFAULTS;
        WorkerSettings old = new WorkerSettings(d.queues(), 4, 10, d.lease(), d.heartbeatInterval(), d.pollInterval(),
                true, true, d.maintenanceInterval(), 1000, d.gracePeriod(), Map.of(), d.workerId(), d.outageBackoffCap());
        assertThat(old.defaultTaskTimeout()).isEmpty();
        assertThat(old).isEqualTo(d.withDefaultTaskTimeout(java.util.Optional.empty()));
    }

    @Test
    void copiesChangeOnlyTheirField() {
        WorkerSettings s = WorkerSettings.DEFAULTS.withConcurrency(16);
        assertThat(s).isEqualTo(new WorkerSettings(s.queues(), 16, 10, Duration.ofSeconds(30), java.util.Optional.empty(),
                Duration.ofSeconds(1), true, true, Duration.ofSeconds(1), 1000, Duration.ofSeconds(30), Map.of(),
                java.util.Optional.of(Duration.ofMinutes(15)), java.util.Optional.empty(), Duration.ofSeconds(5)));
        assertThat(WorkerSettings.DEFAULTS.withListen(false).listen()).isFalse();
        assertThat(WorkerSettings.DEFAULTS.withMaintenanceEnabled(false).maintenanceEnabled()).isFalse();
        assertThat(WorkerSettings.DEFAULTS.withClaimBatchSize(1).claimBatchSize()).isEqualTo(1);
        assertThat(WorkerSettings.DEFAULTS.withMaintenanceBatchLimit(5).maintenanceBatchLimit()).isEqualTo(5);
    }
}
