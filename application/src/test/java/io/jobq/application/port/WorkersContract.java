package io.jobq.application.port;

import static io.jobq.application.port.JobStoreContract.LEASE;
import static io.jobq.application.port.JobStoreContract.OTHER;
import static io.jobq.application.port.JobStoreContract.Q;
import static io.jobq.application.port.JobStoreContract.TASK;
import static io.jobq.application.port.JobStoreContract.W1;
import static io.jobq.application.port.JobStoreContract.W2;
import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.domain.job.TaskName;
import io.jobq.domain.tenant.TenantId;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The live workers registry ({@link JobStore#workerAlive}, {@link JobStore#liveWorkers}) on every store. */
public abstract class WorkersContract {
    /** The store under test, empty at the start of each test. */
    protected abstract JobStore store();

    /** Makes {@code by} pass for the store (see {@link JobStoreContract#advanceTime}); workers' last beats included. */
    protected abstract void advanceTime(Duration by);

    @Test
    void aWorkerIsListedWithWhatItRunsAndItsRunningJobsUntilItGoes() {
        store().workerAlive(W1, List.of(Q, OTHER), List.of(TASK, TaskName.of("mail")), Duration.ofSeconds(10));
        store().workerAlive(W2, List.of(Q), List.of(TASK), Duration.ofSeconds(10));
        store().enqueue(io.jobq.application.port.NewJob.of(TenantId.DEFAULT, Q, TASK, "{}"));
        store().claim(new ClaimRequest(List.of(Q), W1, 1, LEASE));

        List<WorkerInfo> live = store().liveWorkers();
        assertThat(live).extracting(WorkerInfo::id).containsExactly(W1, W2);
        WorkerInfo w1 = live.getFirst();
        assertThat(w1.queues()).containsExactlyInAnyOrder(Q, OTHER);
        assertThat(w1.tasks()).containsExactlyInAnyOrder(TASK, TaskName.of("mail"));
        assertThat(w1.running()).isEqualTo(1);
        assertThat(w1.handles(OTHER, TaskName.of("mail"))).isTrue();
        assertThat(live.get(1).handles(Q, TaskName.of("mail"))).isFalse();

        store().workerGone(W2);
        assertThat(store().liveWorkers()).extracting(WorkerInfo::id).containsExactly(W1);
    }

    @Test
    void aWorkerUnheardForThreeOfItsPeriodsDropsOutAndComesBackWhenItBeatsAgain() {
        store().workerAlive(W1, List.of(Q), List.of(TASK), Duration.ofSeconds(10));
        advanceTime(Duration.ofSeconds(25));
        assertThat(store().liveWorkers()).hasSize(1);
        advanceTime(Duration.ofSeconds(10));
        assertThat(store().liveWorkers()).as("35 s without a beat of its 10 s").isEmpty();
        store().workerAlive(W1, List.of(Q), List.of(TASK), Duration.ofSeconds(10));
        assertThat(store().liveWorkers()).hasSize(1);
    }
}
