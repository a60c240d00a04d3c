package io.jobq.application.port;

import static io.jobq.application.port.JobStoreContract.DEAD;
import static io.jobq.application.port.JobStoreContract.LEASE;
import static io.jobq.application.port.JobStoreContract.Q;
import static io.jobq.application.port.JobStoreContract.REAP;
import static io.jobq.application.port.JobStoreContract.RETRY_DUE;
import static io.jobq.application.port.JobStoreContract.RETRY_IN_1S;
import static io.jobq.application.port.JobStoreContract.TASK;
import static io.jobq.application.port.JobStoreContract.W1;
import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.domain.fairness.MaxRunning;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.JobState;
import io.jobq.domain.lease.FencingToken;
import io.jobq.domain.tenant.TenantId;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Cancelling ({@link JobStore#cancel}) as every store must do it. {@link JobStoreContract} runs these
 * against every store (its nested {@code Cancel}).
 */
public abstract class CancelContract {
    static final TenantId T = TenantId.of("acme");

    /** The store under test, empty at the start of each test. */
    protected abstract JobStore store();

    /** Makes {@code by} pass for the store (see {@link JobStoreContract#advanceTime}). */
    protected abstract void advanceTime(Duration by);

    JobId enqueue(Duration delay) {
        return store().enqueueBatch(new NewJobBatch(T, Q, TASK, List.of("{}"), 5, delay)).getFirst();
    }

    Job claimOne() {
        List<Job> claimed = store().claim(new ClaimRequest(List.of(Q), W1, 1, LEASE));
        assertThat(claimed).hasSize(1);
        return claimed.getFirst();
    }

    Job current(JobId id) {
        return store().get(id).orElseThrow();
    }

    @Test
    void aQueuedOrScheduledJobIsCancelledAtOnceAndNeverClaimed() {
        JobId queued = enqueue(Duration.ZERO);
        JobId scheduled = enqueue(Duration.ofSeconds(5));
        assertThat(store().cancel(queued)).isInstanceOf(CancelResult.Cancelled.class);
        CancelResult second = store().cancel(scheduled);
        assertThat(second).isInstanceOf(CancelResult.Cancelled.class);
        assertThat(((CancelResult.Cancelled) second).job().state()).isEqualTo(JobState.CANCELLED);
        assertThat(current(queued).finishedAt()).isPresent();

        advanceTime(RETRY_DUE);
        store().promoteDue(100);
        assertThat(store().claim(new ClaimRequest(List.of(Q), W1, 10, LEASE))).isEmpty();
        assertThat(store().countsByQueueAndState().get(Q).get(JobState.CANCELLED)).isEqualTo(2);
    }

    @Test
    void cancellingAgainAnswersTheSameAndAFinishedJobIsLeftAlone() {
        JobId id = enqueue(Duration.ZERO);
        store().cancel(id);
        assertThat(store().cancel(id)).as("idempotent").isEqualTo(new CancelResult.Cancelled(current(id)));

        JobId done = enqueue(Duration.ZERO);
        store().complete(claimOne().fencingToken(), Optional.empty());
        assertThat(store().cancel(done)).isEqualTo(new CancelResult.Finished(current(done)));
        JobId dead = enqueue(Duration.ZERO);
        store().fail(claimOne().fencingToken(), "no", DEAD);
        assertThat(store().cancel(dead)).isEqualTo(new CancelResult.Finished(current(dead)));
        assertThat(current(dead).state()).isEqualTo(JobState.DEAD);
        assertThat(store().cancel(JobId.of(987_654))).isEqualTo(new CancelResult.NotFound(JobId.of(987_654)));
    }

    @Test
    void aRunningJobIsAskedAndAFailedRunThenEndsItCancelledNotRetried() {
        enqueue(Duration.ZERO);
        Job run = claimOne();
        CancelResult r = store().cancel(run.id());
        assertThat(r).isInstanceOf(CancelResult.Requested.class);
        assertThat(((CancelResult.Requested) r).job().state()).isEqualTo(JobState.RUNNING);
        assertThat(((CancelResult.Requested) r).job().cancelRequested()).isTrue();
        assertThat(store().cancel(run.id())).as("asking twice").isInstanceOf(CancelResult.Requested.class);

        FencingToken stale = new FencingToken(run.id(), run.fencingToken().worker(), run.attempts() + 1);
        assertThat(store().cancelRequested(List.of(run.fencingToken(), stale))).containsExactly(run.fencingToken());

        store().fail(run.fencingToken(), "interrupted", RETRY_IN_1S);
        Job after = current(run.id());
        assertThat(after.state()).isEqualTo(JobState.CANCELLED);
        assertThat(after.finishedAt()).isPresent();
        assertThat(after.lastError()).contains("interrupted");
        assertThat(store().cancelRequested(List.of(run.fencingToken()))).isEmpty();
    }

    @Test
    void aRunThatSucceedsDespiteTheRequestIsDoneWithItsResult() {
        enqueue(Duration.ZERO);
        Job run = claimOne();
        store().cancel(run.id());
        store().complete(run.fencingToken(), Optional.of("{\"finished\": true}"));
        Job after = current(run.id());
        assertThat(after.state()).isEqualTo(JobState.DONE);
        assertThat(after.result()).isPresent();
    }

    @Test
    void anExpiredLeaseOfACancelledRunEndsItCancelled() {
        enqueue(Duration.ZERO);
        Job run = claimOne();
        store().cancel(run.id());
        advanceTime(LEASE.plusSeconds(1));
        assertThat(store().reapExpiredLeases(10, REAP)).isEqualTo(1);
        assertThat(current(run.id()).state()).isEqualTo(JobState.CANCELLED);
    }

    @Test
    void cancellingACappedTenantsQueuedJobFreesItsSlot() {
        store().configureTenant(TenantUpdate.cap(T, Q, Optional.of(MaxRunning.of(1))));
        List<JobId> ids = store().enqueueBatch(new NewJobBatch(T, Q, TASK, Collections.nCopies(2, "{}"), 5, Duration.ZERO));
        assertThat(current(ids.get(1)).state()).isEqualTo(JobState.HELD);
        store().cancel(ids.get(0));
        assertThat(current(ids.get(1)).state()).isEqualTo(JobState.QUEUED);
        assertThat(Set.of(claimOne().id())).containsExactly(ids.get(1));
    }
}
