package io.jobq.application.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.lease.WorkerId;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class WorkerSettingsTest {

    @Test
    void defaultsAreTheDocumentedOnes() {
        WorkerSettings d = WorkerSettings.DEFAULTS;

        assertThat(d.queues()).containsExactly(QueueName.DEFAULT);
        assertThat(d.concurrency()).isEqualTo(4);
        assertThat(d.claimBatchSize()).isEqualTo(100);
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
        assertThat(WorkerSettings.builder().lease(Duration.ofSeconds(2)).build().effectiveHeartbeatInterval())
                .isEqualTo(Duration.ofNanos(666_666_666));
    }

    @Test
    void anExplicitHeartbeatIsKept() {
        WorkerSettings s = WorkerSettings.builder().heartbeatInterval(Duration.ofSeconds(5))
                .lease(Duration.ofSeconds(60)).build();
        assertThat(s.effectiveHeartbeatInterval()).isEqualTo(Duration.ofSeconds(5));
    }

    @Test
    void theHeartbeatMustBeShorterThanTheLease() {
        assertThatThrownBy(() -> WorkerSettings.builder().heartbeatInterval(Duration.ofSeconds(30)).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("heartbeatInterval must be shorter than lease (PT30S), was PT30S");
    }

    @Test
    void everyProblemIsReportedAtOnce() {
        assertThatThrownBy(() -> WorkerSettings.builder().queues(List.of()).concurrency(0).claimBatchSize(1001).prefetch(-1)
                .lease(Duration.ofMillis(10)).heartbeatInterval(Duration.ZERO).pollInterval(Duration.ZERO)
                .maintenanceInterval(Duration.ofSeconds(-1)).maintenanceBatchLimit(0).gracePeriod(Duration.ofSeconds(-1))
                .taskTimeout(TaskName.of("sleep"), Duration.ZERO).defaultTaskTimeout(Optional.of(Duration.ofSeconds(-5)))
                .outageBackoffCap(Duration.ofMillis(1)).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContainingAll(
                        "queues must name at least one queue",
                        "concurrency must be 1-1000, was 0",
                        "claimBatchSize must be 1-1000, was 1001",
                        "prefetch must be 0-1000, was -1",
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
        assertThatThrownBy(() -> WorkerSettings.builder().queues(QueueName.of("a"), QueueName.of("a")).build())
                .hasMessageContaining("queues must be distinct, was [a, a]");
    }

    @Test
    void aZeroGracePeriodIsAllowed() {
        assertThat(WorkerSettings.builder().gracePeriod(Duration.ZERO).build().gracePeriod()).isZero();
    }

    @Test
    void taskTimeoutsAccumulate() {
        WorkerSettings s = WorkerSettings.builder()
                .taskTimeout(TaskName.of("sleep"), Duration.ofSeconds(1))
                .taskTimeout(TaskName.of("fail"), Duration.ofSeconds(2)).build();

        assertThat(s.timeoutFor(TaskName.of("sleep"))).hasValue(Duration.ofSeconds(1));
        assertThat(s.timeoutFor(TaskName.of("fail"))).hasValue(Duration.ofSeconds(2));
        assertThat(s.timeoutFor(TaskName.of("noop"))).hasValue(WorkerSettings.DEFAULT_TASK_TIMEOUT);
    }

    @Test
    void aTaskWithoutItsOwnTimeoutGetsTheDefaultOneOrNoneWhenTheDefaultIsRemoved() {
        WorkerSettings s = WorkerSettings.builder().taskTimeout(TaskName.of("sleep"), Duration.ofHours(2))
                .defaultTaskTimeout(Optional.of(Duration.ofSeconds(90))).build();
        assertThat(s.timeoutFor(TaskName.of("sleep"))).hasValue(Duration.ofHours(2));
        assertThat(s.timeoutFor(TaskName.of("noop"))).hasValue(Duration.ofSeconds(90));

        WorkerSettings unbounded = s.toBuilder().defaultTaskTimeout(Optional.empty()).build();
        assertThat(unbounded.timeoutFor(TaskName.of("noop"))).isEmpty();
        assertThat(unbounded.timeoutFor(TaskName.of("sleep"))).hasValue(Duration.ofHours(2));
    }

    @Test
    void aBuilderChangesOnlyTheFieldsItIsGiven() {
        WorkerSettings s = WorkerSettings.builder().concurrency(16).build();
        assertThat(s).isEqualTo(new WorkerSettings(s.queues(), 16, 100, Duration.ofSeconds(30), Optional.empty(),
                Duration.ofSeconds(1), true, true, Duration.ofSeconds(1), 1000, Duration.ofSeconds(30), Map.of(),
                Optional.of(Duration.ofMinutes(15)), Optional.empty(), Duration.ofSeconds(5), 100, Duration.ofMillis(2), 0));
        assertThat(WorkerSettings.builder().prefetch(20).build().toBuilder().build().prefetch()).isEqualTo(20);
        assertThat(WorkerSettings.builder().listen(false).build().listen()).isFalse();
        assertThat(WorkerSettings.builder().maintenanceEnabled(false).build().maintenanceEnabled()).isFalse();
        assertThat(WorkerSettings.builder().claimBatchSize(1).build().claimBatchSize()).isEqualTo(1);
        assertThat(WorkerSettings.builder().maintenanceBatchLimit(5).build().maintenanceBatchLimit()).isEqualTo(5);
    }

    @Test
    void toBuilderCopiesEveryFieldSoACopyDiffersOnlyWhereItIsTold() {
        WorkerSettings custom = WorkerSettings.builder().queues(QueueName.of("a"), QueueName.of("b")).concurrency(7)
                .claimBatchSize(3).lease(Duration.ofSeconds(9)).heartbeatInterval(Duration.ofSeconds(2))
                .pollInterval(Duration.ofMillis(300)).listen(false).maintenanceEnabled(false)
                .maintenanceInterval(Duration.ofMillis(700)).maintenanceBatchLimit(50).gracePeriod(Duration.ofSeconds(4))
                .taskTimeout(TaskName.of("sleep"), Duration.ofSeconds(6)).defaultTaskTimeout(Optional.empty())
                .workerId(WorkerId.of("w1")).outageBackoffCap(Duration.ofSeconds(8)).build();

        assertThat(custom.toBuilder().build()).isEqualTo(custom);
        WorkerSettings copy = custom.toBuilder().concurrency(9).build();
        assertThat(copy.concurrency()).isEqualTo(9);
        assertThat(copy.toBuilder().concurrency(7).build()).isEqualTo(custom);
    }

    @Test
    void aBuilderValidatesOnlyWhenBuiltSoFieldsMayBeSetInAnyOrder() {
        // A 40 s heartbeat is not shorter than the default 30 s lease; it is valid once the lease is 2 min.
        WorkerSettings s = WorkerSettings.builder().heartbeatInterval(Duration.ofSeconds(40)).lease(Duration.ofMinutes(2))
                .build();
        assertThat(s.effectiveHeartbeatInterval()).isEqualTo(Duration.ofSeconds(40));
    }

    @Test
    void taskTimeoutsGivenToOneBuilderDoNotLeakIntoSettingsBuiltBefore() {
        WorkerSettings.Builder b = WorkerSettings.builder().taskTimeout(TaskName.of("sleep"), Duration.ofSeconds(1));
        WorkerSettings first = b.build();
        b.taskTimeout(TaskName.of("fail"), Duration.ofSeconds(2));
        assertThat(first.taskTimeouts()).containsOnlyKeys(TaskName.of("sleep"));
        assertThat(b.build().taskTimeouts()).containsOnlyKeys(TaskName.of("sleep"), TaskName.of("fail"));
    }
}
