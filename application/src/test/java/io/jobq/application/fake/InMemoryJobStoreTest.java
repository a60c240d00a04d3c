package io.jobq.application.fake;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.jobq.application.port.ClaimRequest;
import io.jobq.application.port.ExpiredLeaseDecider;
import io.jobq.application.port.NewJob;
import io.jobq.application.port.StoreUnavailableException;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.JobState;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.lease.WorkerId;
import io.jobq.domain.retry.RetryPolicy;
import io.jobq.domain.tenant.TenantId;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * What the port's contract ({@link InMemoryJobStoreContractTest}) does not pin down: the lease boundary
 * to the instant, and the fake's test hooks.
 */
class InMemoryJobStoreTest {
    static final QueueName Q = QueueName.DEFAULT;
    static final TaskName TASK = TaskName.of("noop");
    static final WorkerId W1 = WorkerId.of("w1");
    static final Duration LEASE = Duration.ofSeconds(30);
    static final ExpiredLeaseDecider REAP = ExpiredLeaseDecider.by(RetryPolicy.defaults());

    final ManualClock clock = new ManualClock();
    final InMemoryJobStore store = new InMemoryJobStore(clock);

    JobId enqueue(String tenant) {
        return store.enqueue(NewJob.of(TenantId.of(tenant), Q, TASK, "{}")).job().id();
    }

    List<Job> claim(WorkerId worker, int limit) {
        return store.claim(new ClaimRequest(List.of(Q), worker, limit, LEASE));
    }

    Job claimOne(WorkerId worker) {
        List<Job> jobs = claim(worker, 1);
        assertThat(jobs).hasSize(1);
        return jobs.getFirst();
    }

    /** The fake's own precision: with its clock, a lease is checked to the instant. */
    @Nested
    class Leases {
        @Test
        void aLeaseStillHoldsAtItsExpiryInstantAndLapsesJustAfter() {
            enqueue("a");
            claimOne(W1);
            clock.advance(LEASE);
            assertThat(store.reapExpiredLeases(10, REAP)).as("at the expiry instant the lease still holds").isZero();

            clock.advance(Duration.ofMillis(1));
            assertThat(store.reapExpiredLeases(10, REAP)).isEqualTo(1);
        }
    }

    /** The test hooks other modules' tests use. */
    @Nested
    class Hooks {
        @Test
        void anOutageFailsEveryCallAndChangesNothing() {
            JobId id = enqueue("a");
            store.setAvailable(false);

            assertThatThrownBy(() -> claim(W1, 1)).isInstanceOf(StoreUnavailableException.class)
                    .hasMessageContaining("claim");
            assertThatThrownBy(store::ping).isInstanceOf(StoreUnavailableException.class);
            store.setAvailable(true);
            assertThat(store.require(id).state()).isEqualTo(JobState.QUEUED);
        }
    }
}
