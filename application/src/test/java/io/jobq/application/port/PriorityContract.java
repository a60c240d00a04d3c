package io.jobq.application.port;

import static io.jobq.application.port.JobStoreContract.LEASE;
import static io.jobq.application.port.JobStoreContract.OTHER;
import static io.jobq.application.port.JobStoreContract.Q;
import static io.jobq.application.port.JobStoreContract.TASK;
import static io.jobq.application.port.JobStoreContract.W1;
import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.domain.fairness.MaxRunning;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobState;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.tenant.TenantId;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Priorities within a tenant ({@link JobStore#enqueue}) on every store: a tenant's urgent jobs take its next
 * turns, and whose turn it is stays exactly what it is without priorities. Each scenario runs beside a
 * control in another queue where the same jobs have no priority; the tenants' order of turns must match it.
 * (The wrong variant, an urgent job simply tagged at its tenant's head, is shown to fail this in the
 * PostgreSQL store's {@code TenantPriorityTest}.)
 */
public abstract class PriorityContract {
    private static final TenantId A = TenantId.of("a");
    private static final TenantId B = TenantId.of("b");

    /** The store under test, empty at the start of each test. */
    protected abstract JobStore store();

    /** Makes {@code by} pass for the store (see {@link JobStoreContract#advanceTime}). */
    protected abstract void advanceTime(java.time.Duration by);

    private void enqueue(TenantId tenant, QueueName queue, int n, int priority) {
        for (int i = 0; i < n; i++) store().enqueue(NewJob.of(tenant, queue, TASK, "{}").withPriority(priority));
    }

    /** Claims one job at a time until the queue is empty; each claimed job is completed. */
    private List<Job> drain(QueueName queue) {
        List<Job> order = new ArrayList<>();
        while (true) {
            List<Job> got = store().claim(new ClaimRequest(List.of(queue), W1, 1, LEASE));
            if (got.isEmpty()) return order;
            order.add(got.getFirst());
            store().complete(got.getFirst().fencingToken(), Optional.empty());
        }
    }

    private static List<String> tenants(List<Job> jobs) {
        return jobs.stream().map(j -> j.tenant().value()).toList();
    }

    private static List<Integer> priorities(List<Job> jobs, TenantId tenant) {
        return jobs.stream().filter(j -> j.tenant().equals(tenant)).map(Job::priority).toList();
    }

    @Test
    void urgentJobsTakeTheirTenantsNextTurnsAndNoMoreTurnsThanWithoutPriority() {
        // b first: where tags tie, the lower id goes first, and b's are lower in both queues
        for (QueueName queue : List.of(Q, OTHER)) {
            enqueue(B, queue, 6, 0);
            enqueue(A, queue, 6, 0);
        }
        // in Q two urgent jobs and one of middling priority; in OTHER (the control) the same jobs without priority
        enqueue(A, Q, 2, 5);
        enqueue(A, Q, 1, 2);
        enqueue(A, OTHER, 3, 0);
        enqueue(B, Q, 1, 0);
        enqueue(B, OTHER, 1, 0);

        List<Job> withPriority = drain(Q);
        List<Job> control = drain(OTHER);
        assertThat(tenants(withPriority)).as("whose turn it is").isEqualTo(tenants(control));
        assertThat(priorities(withPriority, A)).as("a's jobs, in the order they ran").containsExactly(5, 5, 2, 0, 0, 0, 0, 0, 0);
    }

    @Test
    void equalPrioritiesKeepTheirOrderAndAHigherOneIsNotPassed() {
        List<Long> ids = new ArrayList<>();
        for (int p : new int[] {0, 9, 0, 3, 3, 9}) {
            ids.add(store().enqueue(NewJob.of(A, Q, TASK, "{}").withPriority(p)).job().id().value());
        }
        List<Job> order = drain(Q);
        assertThat(order).extracting(Job::priority).containsExactly(9, 9, 3, 3, 0, 0);
        assertThat(order).extracting(j -> j.id().value())
                .containsExactly(ids.get(1), ids.get(5), ids.get(3), ids.get(4), ids.get(0), ids.get(2));
    }

    @Test
    void aNewJobStaysBehindAnOlderOneOfEqualPriorityReleasedBeforeIt() {
        store().configureTenant(TenantUpdate.cap(A, Q, Optional.of(MaxRunning.of(3))));
        List<Job> abc = new ArrayList<>();
        for (int i = 0; i < 3; i++) abc.add(store().enqueue(NewJob.of(A, Q, TASK, "{}")).job());
        Job held = store().enqueue(NewJob.of(A, Q, TASK, "{}").withPriority(5)).job();
        store().cancel(abc.get(1).id());
        store().cancel(abc.get(2).id()); // room: the held urgent job is released, tagged at the tenant's back
        Job newer = store().enqueue(NewJob.of(A, Q, TASK, "{}").withPriority(5)).job();
        assertThat(drain(Q)).extracting(Job::id).containsExactly(held.id(), newer.id(), abc.getFirst().id());
    }

    @Test
    void aJobTaggedAtTheBackWithAHigherPriorityIsNotPassed() {
        Job d = store().enqueue(NewJob.of(A, Q, TASK, "{}").withPriority(5)).job();
        Job claimed = store().claim(new ClaimRequest(List.of(Q), W1, 1, LEASE)).getFirst();
        store().fail(claimed.fencingToken(), "boom", JobStoreContract.DEAD);
        Job a = store().enqueue(NewJob.of(A, Q, TASK, "{}")).job();
        store().retryDead(d.id()); // requeued with a fresh tag, behind a
        Job n = store().enqueue(NewJob.of(A, Q, TASK, "{}").withPriority(3)).job();
        assertThat(drain(Q)).extracting(Job::id).containsExactly(d.id(), n.id(), a.id());
    }

    @Test
    void aDelayedUrgentJobIsSortedInWhenItIsPromoted() {
        enqueue(A, Q, 3, 0);
        Job urgent = store().enqueue(NewJob.of(A, Q, TASK, "{}").withPriority(9).withDelay(java.time.Duration.ofSeconds(10))).job();
        advanceTime(java.time.Duration.ofSeconds(11));
        assertThat(store().promoteDue(100)).isEqualTo(1);
        assertThat(drain(Q).getFirst().id()).isEqualTo(urgent.id());
    }

    @Test
    void aCappedTenantsHeldJobsAreReleasedHighestPriorityFirst() {
        store().configureTenant(TenantUpdate.cap(A, Q, Optional.of(MaxRunning.of(1))));
        enqueue(A, Q, 3, 0);
        enqueue(A, Q, 1, 7);
        assertThat(store().get(store().list(JobQuery.firstPage()).getFirst().id()).orElseThrow().state())
                .as("the urgent job waits held behind the one queued").isEqualTo(JobState.HELD);
        List<Job> order = drain(Q);
        assertThat(order).extracting(Job::priority).containsExactly(0, 7, 0, 0);
    }
}
