package io.jobq.application.port;

import static io.jobq.application.port.JobStoreContract.LEASE;
import static io.jobq.application.port.JobStoreContract.OTHER;
import static io.jobq.application.port.JobStoreContract.Q;
import static io.jobq.application.port.JobStoreContract.REAP;
import static io.jobq.application.port.JobStoreContract.RETRY_DUE;
import static io.jobq.application.port.JobStoreContract.RETRY_IN_1S;
import static io.jobq.application.port.JobStoreContract.TASK;
import static io.jobq.application.port.JobStoreContract.W1;
import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.domain.fairness.MaxRunning;
import io.jobq.domain.fairness.TenantWeight;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.JobState;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.tenant.TenantId;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Per-tenant caps ({@link JobStore#configureTenant} with {@code max_running}) as every store must keep
 * them: a capped tenant's jobs beyond the cap are held and never claimed; each way a run ends frees its
 * slot exactly once; raising, lowering and removing the cap act at once. {@link JobStoreContract} runs
 * these against every store (its nested {@code Caps}).
 */
public abstract class CapsContract {
    static final TenantId CAPPED = TenantId.of("capped");
    static final TenantId FREE = TenantId.of("free");

    /** The store under test, empty at the start of each test. */
    protected abstract JobStore store();

    /** Makes {@code by} pass for the store (see {@link JobStoreContract#advanceTime}). */
    protected abstract void advanceTime(Duration by);

    TenantSettings cap(TenantId tenant, QueueName queue, int max) {
        return store().configureTenant(TenantUpdate.cap(tenant, queue, Optional.of(MaxRunning.of(max))));
    }

    List<JobId> enqueue(TenantId tenant, QueueName queue, int n) {
        return store().enqueueBatch(new NewJobBatch(tenant, queue, TASK, Collections.nCopies(n, "{}"), 5, Duration.ZERO));
    }

    List<Job> claim(QueueName queue, int limit) {
        return store().claim(new ClaimRequest(List.of(queue), W1, limit, LEASE));
    }

    List<JobId> inState(TenantId tenant, QueueName queue, JobState state) {
        return store().list(new JobQuery(Optional.of(tenant), Optional.of(queue), Optional.of(state), Optional.empty(), JobQuery.MAX_LIMIT,
                Optional.empty())).stream().map(Job::id).sorted(java.util.Comparator.comparingLong(JobId::value)).toList();
    }

    @Test
    void jobsBeyondTheCapAreHeldAndNeverClaimedWhileOtherTenantsRunFreely() {
        cap(CAPPED, Q, 2);
        List<JobId> capped = enqueue(CAPPED, Q, 5);
        enqueue(FREE, Q, 5);

        assertThat(inState(CAPPED, Q, JobState.QUEUED)).containsExactlyElementsOf(capped.subList(0, 2));
        assertThat(inState(CAPPED, Q, JobState.HELD)).containsExactlyElementsOf(capped.subList(2, 5));
        List<Job> claimed = claim(Q, 100);
        assertThat(claimed).filteredOn(j -> j.tenant().equals(CAPPED)).hasSize(2);
        assertThat(claimed).filteredOn(j -> j.tenant().equals(FREE)).hasSize(5);
        assertThat(claim(Q, 100)).as("nothing more is claimable while the capped tenant is at its cap").isEmpty();
    }

    @Test
    void eachRunThatEndsReleasesTheOldestHeldJobOnce() {
        cap(CAPPED, Q, 2);
        List<JobId> ids = enqueue(CAPPED, Q, 6);
        List<Job> running = claim(Q, 10);
        assertThat(running).hasSize(2);

        store().complete(running.get(0).fencingToken(), Optional.empty());
        assertThat(inState(CAPPED, Q, JobState.QUEUED)).as("a completion frees one slot").containsExactly(ids.get(2));
        store().fail(running.get(1).fencingToken(), "boom", RETRY_IN_1S);
        assertThat(inState(CAPPED, Q, JobState.QUEUED)).as("a failure frees one slot").containsExactly(ids.get(2), ids.get(3));
        assertThat(inState(CAPPED, Q, JobState.HELD)).containsExactly(ids.get(4), ids.get(5));

        // The retry comes due while the tenant is at its cap: it waits held, not queued.
        advanceTime(RETRY_DUE);
        store().promoteDue(100);
        assertThat(inState(CAPPED, Q, JobState.QUEUED)).hasSize(2);
        assertThat(inState(CAPPED, Q, JobState.HELD)).contains(running.get(1).id());
    }

    @Test
    void aReleasedRunStaysCountedUnlessItsJobWasCancelledWhichFreesItsSlotAtOnce() {
        cap(CAPPED, Q, 1);
        List<JobId> ids = enqueue(CAPPED, Q, 3);
        Job first = claim(Q, 10).getFirst();

        assertThat(store().release(List.of(first.fencingToken()))).isEqualTo(1);
        assertThat(inState(CAPPED, Q, JobState.QUEUED)).as("given back: still the one job under the cap").containsExactly(ids.get(0));
        Job again = claim(Q, 10).getFirst();
        store().cancel(again.id());
        assertThat(store().release(List.of(again.fencingToken()))).isEqualTo(1);
        assertThat(inState(CAPPED, Q, JobState.QUEUED)).as("cancelled: its slot goes to the oldest held job").containsExactly(ids.get(1));
    }

    @Test
    void anExpiredLeaseFreesItsSlotExactlyOnce() {
        cap(CAPPED, Q, 1);
        List<JobId> ids = enqueue(CAPPED, Q, 3);
        assertThat(claim(Q, 10)).extracting(Job::id).containsExactly(ids.get(0));

        advanceTime(LEASE.plusSeconds(1));
        assertThat(store().reapExpiredLeases(100, REAP)).isEqualTo(1);
        store().promoteDue(100); // maintenance's pass: reaps, then promotes and releases
        store().promoteDue(100);
        // The freed slot goes to the oldest held job, or, when the reaped job's jittered retry delay was near 0
        // (full jitter: uniform from 0), to the reaped job itself, promoted in the same pass: either way one.
        List<JobId> queued = inState(CAPPED, Q, JobState.QUEUED);
        assertThat(queued).as("one slot freed, once").hasSize(1);
        assertThat(queued.getFirst()).isIn(ids.get(0), ids.get(1));
        assertThat(inState(CAPPED, Q, JobState.HELD)).contains(ids.get(2)).doesNotContainAnyElementsOf(queued);
    }

    @Test
    void raisingLoweringAndRemovingTheCapActAtOnce() {
        cap(CAPPED, Q, 1);
        List<JobId> ids = enqueue(CAPPED, Q, 4);
        assertThat(inState(CAPPED, Q, JobState.QUEUED)).containsExactly(ids.get(0));

        cap(CAPPED, Q, 3);
        assertThat(inState(CAPPED, Q, JobState.QUEUED)).as("raised: released oldest first").containsExactlyElementsOf(ids.subList(0, 3));

        Job running = claim(Q, 1).getFirst();
        cap(CAPPED, Q, 2);
        assertThat(inState(CAPPED, Q, JobState.RUNNING)).containsExactly(running.id());
        assertThat(inState(CAPPED, Q, JobState.QUEUED)).as("lowered: the newest queued job is held again").hasSize(1);
        assertThat(inState(CAPPED, Q, JobState.HELD)).hasSize(2);

        TenantSettings removed = store().configureTenant(TenantUpdate.cap(CAPPED, Q, Optional.empty()));
        assertThat(removed.maxRunning()).isEmpty();
        assertThat(inState(CAPPED, Q, JobState.QUEUED)).as("removed: everything runnable").hasSize(3);
        assertThat(inState(CAPPED, Q, JobState.HELD)).isEmpty();
    }

    @Test
    void aCapAppliesInItsQueueOnlyAndTheWeightIsKeptBesideIt() {
        store().setWeight(CAPPED, Q, TenantWeight.of(3));
        TenantSettings set = cap(CAPPED, Q, 1);
        assertThat(set).isEqualTo(new TenantSettings(CAPPED, Q, TenantWeight.of(3), Optional.of(MaxRunning.of(1))));
        assertThat(store().setWeight(CAPPED, Q, TenantWeight.of(2)).maxRunning()).as("a weight change keeps the cap")
                .contains(MaxRunning.of(1));

        enqueue(CAPPED, Q, 3);
        enqueue(CAPPED, OTHER, 3);
        assertThat(inState(CAPPED, Q, JobState.QUEUED)).hasSize(1);
        assertThat(inState(CAPPED, OTHER, JobState.QUEUED)).hasSize(3);
    }

    @Test
    void aDeadJobRetriedAtTheCapWaitsHeld() {
        cap(CAPPED, Q, 1);
        List<JobId> ids = enqueue(CAPPED, Q, 2);
        Job first = claim(Q, 1).getFirst();
        store().fail(first.fencingToken(), "gone", JobStoreContract.DEAD);
        Job second = claim(Q, 1).getFirst();
        assertThat(second.id()).isEqualTo(ids.get(1));

        assertThat(store().retryDead(first.id())).isInstanceOf(RetryResult.Requeued.class);
        assertThat(inState(CAPPED, Q, JobState.HELD)).containsExactly(first.id());
        store().complete(second.fencingToken(), Optional.empty());
        assertThat(inState(CAPPED, Q, JobState.QUEUED)).containsExactly(first.id());
    }

    @Test
    void capUsageShowsEachCappedTenantsRunningAndHeldJobs() {
        cap(CAPPED, Q, 2);
        enqueue(CAPPED, Q, 5);
        enqueue(FREE, Q, 5);
        claim(Q, 1);

        assertThat(store().capUsage(10)).containsExactly(new CapUsage(Q, CAPPED, MaxRunning.of(2), 1, 3));
    }
}
