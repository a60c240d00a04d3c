package io.jobq.application.fake;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.jobq.application.port.ClaimRequest;
import io.jobq.application.port.EnqueueResult;
import io.jobq.application.port.FencedWrite;
import io.jobq.application.port.JobQuery;
import io.jobq.application.port.JobStore;
import io.jobq.application.port.NewJob;
import io.jobq.application.port.NewJobBatch;
import io.jobq.application.port.RetryResult;
import io.jobq.application.port.StoreUnavailableException;
import io.jobq.domain.fairness.TenantWeight;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.JobState;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.lease.FencingToken;
import io.jobq.domain.lease.WorkerId;
import io.jobq.domain.retry.BackoffPolicy;
import io.jobq.domain.tenant.TenantId;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * The fake's behaviours the worker and the other layers' tests rely on. Each case is one the
 * PostgreSQL store must show too (architecture.md), written against the port only.
 */
class InMemoryJobStoreTest {
    static final QueueName Q = QueueName.DEFAULT;
    static final TaskName TASK = TaskName.of("noop");
    static final WorkerId W1 = WorkerId.of("w1");
    static final WorkerId W2 = WorkerId.of("w2");
    static final Duration LEASE = Duration.ofSeconds(30);

    final ManualClock clock = new ManualClock();
    final InMemoryJobStore store = new InMemoryJobStore(clock,
            new BackoffPolicy(Duration.ofSeconds(1), Duration.ofMinutes(10), new SplittableRandom(1)));

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

    /** One job of tenant "a", enqueued and claimed by {@link #W1}. */
    Job running() {
        enqueue("a");
        return claimOne(W1);
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

        @Test
        void aTenantArrivingAtAnEmptyQueueStartsFromTheHighestTagHandedOut() {
            for (int i = 0; i < 5; i++) enqueue("a");
            claim(W1, 5);
            Job late = store.enqueue(NewJob.of(TenantId.of("b"), Q, TASK, "{}")).job();

            assertThat(late.vtime().getAsDouble()).isEqualTo(6.0);
        }

        @Test
        void aBatchGetsConsecutiveTagsInOrder() {
            List<JobId> ids = store.enqueueBatch(new NewJobBatch(TenantId.of("a"), Q, TASK,
                    List.of("{\"n\":1}", "{\"n\":2}", "{\"n\":3}"), 5, Duration.ZERO));

            assertThat(ids).extracting(id -> store.require(id).vtime().getAsDouble()).containsExactly(1.0, 2.0, 3.0);
        }
    }

    @Nested
    class Enqueueing {
        @Test
        void anIdempotencyKeyReturnsTheOriginalJobPerTenant() {
            NewJob job = NewJob.of(TenantId.of("a"), Q, TASK, "{}").withIdempotencyKey("k");
            EnqueueResult first = store.enqueue(job);
            EnqueueResult again = store.enqueue(job);
            EnqueueResult otherTenant = store.enqueue(NewJob.of(TenantId.of("b"), Q, TASK, "{}").withIdempotencyKey("k"));

            assertThat(first).isInstanceOf(EnqueueResult.Created.class);
            assertThat(again).isInstanceOf(EnqueueResult.Existing.class);
            assertThat(again.job().id()).isEqualTo(first.job().id());
            assertThat(otherTenant).isInstanceOf(EnqueueResult.Created.class);
        }

        @Test
        void aDelayedJobIsScheduledAndPromotedWhenDue() {
            Job job = store.enqueue(NewJob.of(TenantId.of("a"), Q, TASK, "{}").withDelay(Duration.ofSeconds(10))).job();
            assertThat(job.state()).isEqualTo(JobState.SCHEDULED);
            assertThat(job.vtime()).isEmpty();
            assertThat(claim(W1, 1)).isEmpty();

            clock.advance(Duration.ofSeconds(9));
            assertThat(store.promoteDue(10)).isZero();
            clock.advance(Duration.ofSeconds(1));
            assertThat(store.promoteDue(10)).isEqualTo(1);
            assertThat(store.require(job.id()).state()).isEqualTo(JobState.QUEUED);
        }

        @Test
        void aNulEscapeInAPayloadIsStripped() {
            Job job = store.enqueue(NewJob.of(TenantId.of("a"), Q, TASK, "{\"k\\u0000\": \"a\\u0000b\"}")).job();

            assertThat(job.payload()).isEqualTo("{\"k\":\"ab\"}");
        }
    }

    @Nested
    class Runs {
        @Test
        void aClaimIncrementsAttemptsAndLeasesUntilNowPlusTheLease() {
            JobId id = enqueue("a");
            Job job = claimOne(W1);

            assertThat(job.id()).isEqualTo(id);
            assertThat(job.state()).isEqualTo(JobState.RUNNING);
            assertThat(job.attempts()).isEqualTo(1);
            assertThat(job.lease().orElseThrow().expiry()).isEqualTo(clock.instant().plus(LEASE));
            assertThat(job.fencingToken()).isEqualTo(new FencingToken(id, W1, 1));
        }

        @Test
        void aClaimTakesFromEveryRequestedQueue() {
            store.enqueue(NewJob.of(TenantId.of("a"), QueueName.of("mail"), TASK, "{}"));
            store.enqueue(NewJob.of(TenantId.of("a"), QueueName.of("other"), TASK, "{}"));
            enqueue("a");

            assertThat(store.claim(new ClaimRequest(List.of(Q, QueueName.of("mail")), W1, 10, LEASE)))
                    .extracting(j -> j.queue().value()).containsExactlyInAnyOrder("default", "mail");
        }

        @Test
        void completeAppliesOnlyWithTheRunsToken() {
            Job job = running();

            assertThat(store.complete(new FencingToken(job.id(), W2, 1), Optional.empty()).applied()).isFalse();
            assertThat(store.complete(new FencingToken(job.id(), W1, 2), Optional.empty()).applied()).isFalse();
            FencedWrite write = store.complete(job.fencingToken(), Optional.of("{\"ok\":true}"));

            assertThat(write).isInstanceOf(FencedWrite.Applied.class);
            Job done = store.require(job.id());
            assertThat(done.state()).isEqualTo(JobState.DONE);
            assertThat(done.result()).hasValue("{\"ok\":true}");
            assertThat(done.lease()).isEmpty();
            assertThat(store.complete(job.fencingToken(), Optional.empty()))
                    .isEqualTo(new FencedWrite.Rejected(job.fencingToken(), Optional.of(done)));
        }

        @Test
        void theSameWorkerReclaimingAJobCannotCompleteTheOldRun() {
            Job first = running();
            clock.advance(LEASE.plusSeconds(1));
            store.reapExpiredLeases(10);
            clock.advance(Duration.ofMinutes(1));
            store.promoteDue(10);
            Job second = claimOne(W1);

            assertThat(second.attempts()).isEqualTo(2);
            assertThat(store.complete(first.fencingToken(), Optional.empty()).applied()).isFalse();
            assertThat(store.complete(second.fencingToken(), Optional.empty()).applied()).isTrue();
        }

        @Test
        void aResultWithANulIsStoredWithoutIt() {
            Job job = running();
            store.complete(job.fencingToken(), Optional.of("{\"s\":\"a\\u0000b\"}"));

            assertThat(store.require(job.id()).result()).hasValue("{\"s\":\"ab\"}");
        }

        @Test
        void aRetryableFailureSchedulesWithinTheBackoffWindow() {
            Job job = running();
            Job failed = ((FencedWrite.Applied) store.fail(job.fencingToken(), "boom", false)).job();

            assertThat(failed.state()).isEqualTo(JobState.SCHEDULED);
            assertThat(failed.lastError()).hasValue("boom");
            assertThat(failed.runAt()).isBetween(clock.instant(), clock.instant().plusSeconds(1));
        }

        @Test
        void aPermanentFailureOrTheLastAttemptIsDead() {
            Job job = running();
            assertThat(((FencedWrite.Applied) store.fail(job.fencingToken(), "bad", true)).job().state())
                    .isEqualTo(JobState.DEAD);

            store.enqueue(NewJob.of(TenantId.of("a"), Q, TASK, "{}").withMaxAttempts(1));
            Job last = claimOne(W1);
            assertThat(((FencedWrite.Applied) store.fail(last.fencingToken(), "x", false)).job().state())
                    .isEqualTo(JobState.DEAD);
        }

        @Test
        void errorTextIsSanitisedAndBounded() {
            Job job = running();
            store.fail(job.fencingToken(), "a\u0000" + "é".repeat(50_000), false);

            String error = store.require(job.id()).lastError().orElseThrow();
            assertThat(error).doesNotContain("\u0000").endsWith(io.jobq.domain.job.StoredText.TRUNCATION_MARKER);
            assertThat(error.getBytes(StandardCharsets.UTF_8).length).isLessThanOrEqualTo(JobStore.MAX_ERROR_BYTES);
        }
    }

    @Nested
    class Leases {
        @Test
        void aHeartbeatExtendsHeldLeasesAndReportsLostOnes() {
            Job held = running();
            FencingToken stale = new FencingToken(held.id(), W1, 7);
            clock.advance(Duration.ofSeconds(20));

            assertThat(store.heartbeat(List.of(held.fencingToken(), stale), LEASE)).containsExactly(stale);
            assertThat(store.require(held.id()).lease().orElseThrow().expiry()).isEqualTo(clock.instant().plus(LEASE));
        }

        @Test
        void anExpiredLeaseIsReapedNamingItsOwner() {
            Job job = running();
            clock.advance(LEASE);
            assertThat(store.reapExpiredLeases(10)).as("at the expiry instant the lease still holds").isZero();

            clock.advance(Duration.ofMillis(1));
            assertThat(store.reapExpiredLeases(10)).isEqualTo(1);
            Job reaped = store.require(job.id());
            assertThat(reaped.state()).isEqualTo(JobState.SCHEDULED);
            assertThat(reaped.attempts()).isEqualTo(1);
            assertThat(reaped.lastError().orElseThrow()).contains("lease expired").contains("w1").contains("attempt 1");
            assertThat(store.heartbeat(List.of(job.fencingToken()), LEASE)).containsExactly(job.fencingToken());
        }

        @Test
        void aLeaseExpiringOnTheLastAttemptIsDead() {
            store.enqueue(NewJob.of(TenantId.of("a"), Q, TASK, "{}").withMaxAttempts(1));
            Job job = claimOne(W1);
            clock.advance(LEASE.plusSeconds(1));
            store.reapExpiredLeases(10);

            assertThat(store.require(job.id()).state()).isEqualTo(JobState.DEAD);
        }

        @Test
        void reapAndPromoteRespectTheirLimit() {
            for (int i = 0; i < 5; i++) enqueue("a");
            claim(W1, 5);
            clock.advance(LEASE.plusSeconds(1));

            assertThat(store.reapExpiredLeases(2)).isEqualTo(2);
            assertThat(store.reapExpiredLeases(10)).isEqualTo(3);
            clock.advance(Duration.ofHours(1));
            assertThat(store.promoteDue(4)).isEqualTo(4);
            assertThat(store.promoteDue(4)).isEqualTo(1);
        }
    }

    @Nested
    class Operations {
        @Test
        void retryDeadKeepsAttemptsAndGrantsAFreshBudget() {
            store.enqueue(NewJob.of(TenantId.of("a"), Q, TASK, "{}").withMaxAttempts(2));
            Job job = claimOne(W1);
            store.fail(job.fencingToken(), "bad", true);

            RetryResult result = store.retryDead(job.id());

            assertThat(result).isInstanceOf(RetryResult.Requeued.class);
            Job requeued = ((RetryResult.Requeued) result).job();
            assertThat(requeued.state()).isEqualTo(JobState.QUEUED);
            assertThat(requeued.attempts()).isEqualTo(1);
            assertThat(requeued.maxAttempts()).isEqualTo(3);
            assertThat(store.retryDead(job.id())).isInstanceOf(RetryResult.NotDead.class);
            assertThat(store.retryDead(JobId.of(999))).isEqualTo(new RetryResult.NotFound(JobId.of(999)));
        }

        @Test
        void listingIsNewestFirstAndKeysetPaginated() {
            for (int i = 0; i < 5; i++) enqueue(i % 2 == 0 ? "a" : "b");

            JobQuery page = new JobQuery(Optional.of(TenantId.of("a")), Optional.empty(), Optional.empty(), 2,
                    Optional.empty());
            List<Job> first = store.list(page);
            List<Job> second = store.list(new JobQuery(page.tenant(), page.queue(), page.state(), 2,
                    Optional.of(first.getLast().id())));

            assertThat(first).extracting(j -> j.id().value()).containsExactly(5L, 3L);
            assertThat(second).extracting(j -> j.id().value()).containsExactly(1L);
        }

        @Test
        void statisticsCountBacklogsAndAges() {
            enqueue("a");
            enqueue("a");
            enqueue("b");
            claimOne(W1);
            clock.advance(Duration.ofSeconds(5));

            assertThat(store.countsByQueueAndState()).isEqualTo(Map.of(Q, Map.of(JobState.QUEUED, 2L, JobState.RUNNING, 1L)));
            assertThat(store.oldestRunnableAge()).isEqualTo(Map.of(Q, Duration.ofSeconds(5)));
            assertThat(store.largestBacklogs(10)).extracting(b -> b.tenant().value() + "=" + b.queued())
                    .containsExactly("a=1", "b=1");
        }

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
