package io.jobq.application.fake;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.jobq.application.port.ClaimRequest;
import io.jobq.application.port.ExpiredLeaseDecider;
import io.jobq.application.port.NewJob;
import io.jobq.application.port.StoreUnavailableException;
import io.jobq.domain.fairness.TenantWeight;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.JobState;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.lease.WorkerId;
import io.jobq.domain.retry.RetryPolicy;
import io.jobq.domain.tenant.TenantId;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * What the port's contract ({@link InMemoryJobStoreContractTest}) does not pin down: fairness over long
 * runs, checked cheaply here because the fake needs no database, the lease boundary to the instant, and
 * the fake's test hooks.
 */
class InMemoryJobStoreTest {
    static final QueueName Q = QueueName.DEFAULT;
    static final TaskName TASK = TaskName.of("noop");
    static final WorkerId W1 = WorkerId.of("w1");
    static final Duration LEASE = Duration.ofSeconds(30);

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

    List<String> claimOrder(int n) {
        List<String> tenants = new ArrayList<>();
        for (Job j : claim(W1, n)) tenants.add(j.tenant().value());
        return tenants;
    }

    @Nested
    class Fairness {
        @Test
        void aLateTenantInterleavesWithAFlood() {
            for (int i = 0; i < 100; i++) enqueue("big");
            claim(W1, 10);
            for (int i = 0; i < 3; i++) enqueue("small");

            // Head (V) is big's 11; small gets 12, 13, 14, each behind big's equal tag by id. FIFO
            // would hand out 90 more "big" first.
            assertThat(claimOrder(7)).containsExactly("big", "big", "small", "big", "small", "big", "small");
        }

        @Test
        void threeTenantsAlternateOnceTheyAreAllWaiting() {
            for (String t : List.of("a", "a", "a", "b", "b", "b", "c", "c", "c")) enqueue(t);

            // a: 1, 2, 3. b and c arrive when the head (V) is a's 1, so start at 2: tied with a's
            // second job and behind it by id. From there on the three alternate strictly.
            assertThat(claimOrder(9)).containsExactly("a", "a", "b", "c", "a", "b", "c", "b", "c");
        }

        @Test
        void weightsThreeToOneGiveThreeToOneClaims() {
            store.setWeight(TenantId.of("heavy"), Q, TenantWeight.of(3));
            for (int i = 0; i < 60; i++) enqueue("heavy");
            for (int i = 0; i < 60; i++) enqueue("light");

            // Tags: heavy k/3, light 1/3 + k. The first 40 claims reach tag ~10: 30 heavy, 10 light.
            List<String> first40 = claimOrder(40);
            assertThat(first40.stream().filter("heavy"::equals).count()).isBetween(29L, 31L);
        }

        @Test
        void anIdleTenantBanksNoCredit() {
            enqueue("idle");
            claim(W1, 1);
            for (int i = 0; i < 50; i++) enqueue("busy");
            claim(W1, 40);
            for (int i = 0; i < 5; i++) enqueue("idle");

            // Restarting from the head's tag (busy's 42), the returning tenant gets 43..47 and
            // alternates; from its own old tag (1) it would bank credit and take the next five slots.
            assertThat(claimOrder(6)).containsExactly("busy", "busy", "idle", "busy", "idle", "busy");
        }
    }

    /** The fake's own precision: with its clock, a lease is checked to the instant. */
    @Nested
    class Leases {
        @Test
        void aLeaseStillHoldsAtItsExpiryInstantAndLapsesJustAfter() {
            enqueue("a");
            claimOne(W1);
            clock.advance(LEASE);
            assertThat(store.reapExpiredLeases(10, ExpiredLeaseDecider.by(RetryPolicy.defaults()))).as("at the expiry instant the lease still holds").isZero();

            clock.advance(Duration.ofMillis(1));
            assertThat(store.reapExpiredLeases(10, ExpiredLeaseDecider.by(RetryPolicy.defaults()))).isEqualTo(1);
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
