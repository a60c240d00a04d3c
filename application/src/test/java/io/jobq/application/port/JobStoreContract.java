package io.jobq.application.port;

import static io.jobq.application.fake.Json.json;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import io.jobq.domain.fairness.TenantWeight;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.JobState;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.StoredText;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.lease.FencingToken;
import io.jobq.domain.lease.WorkerId;
import io.jobq.domain.retry.BackoffPolicy;
import io.jobq.domain.retry.RetryDecision;
import io.jobq.domain.retry.RetryPolicy;
import io.jobq.domain.tenant.TenantId;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * The {@link JobStore} port's documented semantics, written once and run against every implementation,
 * so the in-memory fake the worker's unit tests rely on cannot drift from the PostgreSQL store. Where
 * the two disagree, the PostgreSQL store is the reference.
 *
 * <p>A subclass supplies the store, the store's clock and a way to age the store's rows. Time moves only through {@link #advanceTime}, never by sleeping, so every bound
 * below is deterministic: a real store's clock creeps on by the milliseconds a test takes, which is why
 * instants are checked between a reading before and one after the call, and why "not yet" cases keep
 * a margin of seconds.
 *
 * <p>Payloads and results are compared as JSON values, not text: PostgreSQL's jsonb re-renders them
 * (spacing, key order), and callers must not depend on the exact text.
 */
public abstract class JobStoreContract {
    protected static final QueueName Q = QueueName.DEFAULT;
    protected static final QueueName OTHER = QueueName.of("other");
    protected static final TaskName TASK = TaskName.of("noop");
    protected static final WorkerId W1 = WorkerId.of("w1");
    protected static final WorkerId W2 = WorkerId.of("w2");
    protected static final Duration LEASE = Duration.ofSeconds(30);


    /** A failure's usual decision in these cases: retry after 1 s. */
    protected static final RetryDecision RETRY_IN_1S = new RetryDecision.RetryAfter(Duration.ofSeconds(1));
    /** Dead now, as for a permanent failure. */
    protected static final RetryDecision DEAD = new RetryDecision.Dead(RetryDecision.Cause.PERMANENT_FAILURE);

    /**
     * Reaps as a worker does: the domain's policy for an expired lease, with backoff base 1 s and cap 8 s,
     * so a reaped run is due again within {@link #RETRY_DUE}, well before a lease lapses.
     */
    protected static final ExpiredLeaseDecider REAP =
            ExpiredLeaseDecider.by(new RetryPolicy(BackoffPolicy.of(Duration.ofSeconds(1), Duration.ofSeconds(8))));

    /** Longer than any delay {@link #RETRY_IN_1S} or {@link #REAP} gives, shorter than {@link #LEASE}. */
    protected static final Duration RETRY_DUE = Duration.ofSeconds(9);

    /** A fresh, empty store for the current test. */
    protected abstract JobStore store();

    /** The store's clock now (the database's {@code now()} for a real store). */
    protected abstract Instant storeNow();

    /**
     * Makes {@code by} pass for the store: every lease, run_at and other instant it holds becomes that
     * much older relative to its clock. A fake moves its clock; a database store may shift its rows.
     */
    protected abstract void advanceTime(Duration by);

    // --- shorthands -------------------------------------------------------------------------------

    static NewJob job(String tenant) {
        return NewJob.of(TenantId.of(tenant), Q, TASK, "{}");
    }

    Job enqueue(String tenant) {
        return store().enqueue(job(tenant)).job();
    }

    Job delayed(String tenant, long seconds) {
        return store().enqueue(job(tenant).withDelay(Duration.ofSeconds(seconds))).job();
    }

    List<Job> claim(WorkerId worker, int limit) {
        return store().claim(new ClaimRequest(List.of(Q), worker, limit, LEASE));
    }

    Job claimOne(WorkerId worker) {
        List<Job> jobs = claim(worker, 1);
        assertThat(jobs).hasSize(1);
        return jobs.getFirst();
    }

    /** One job of tenant "t", enqueued and claimed by {@link #W1}. */
    Job running() {
        store().enqueue(job("t"));
        return claimOne(W1);
    }

    Job current(JobId id) {
        return store().get(id).orElseThrow();
    }

    static Job applied(FencedWrite write) {
        assertThat(write).isInstanceOf(FencedWrite.Applied.class);
        return ((FencedWrite.Applied) write).job();
    }

    /** {@link JobStore#reapExpiredLeases} as a worker calls it, with {@link #REAP}. */
    int reap(int limit) {
        return store().reapExpiredLeases(limit, REAP);
    }

    /** Expires {@code job}'s lease, reaps it, makes its retry due, promotes it and claims it again. */
    Job reclaimAfterLeaseExpiry(WorkerId worker) {
        advanceTime(LEASE.plusSeconds(1));
        assertThat(reap(10)).isEqualTo(1);
        advanceTime(RETRY_DUE);
        assertThat(store().promoteDue(10)).isEqualTo(1);
        return claimOne(worker);
    }


    static double tag(Job j) {
        return j.vtime().orElseThrow();
    }

    static JobQuery query(Optional<TenantId> tenant, Optional<QueueName> queue, Optional<JobState> state, int limit,
            Optional<JobId> after) {
        return new JobQuery(tenant, queue, state, Optional.empty(), limit, after);
    }

    // --- the contract -----------------------------------------------------------------------------

    @Nested
    class Enqueue {
        @Test
        void aRunnableJobIsQueuedNowWithTheTenantsNextStartTag() {
            Instant before = storeNow();
            EnqueueResult first = store().enqueue(NewJob.of(TenantId.of("acme"), Q, TASK, "{\"text\": \"hi\"}"));
            Instant after = storeNow();
            Job second = enqueue("acme");

            assertThat(first).isInstanceOf(EnqueueResult.Created.class);
            Job j = first.job();
            assertThat(j.state()).isEqualTo(JobState.QUEUED);
            assertThat(tag(j)).isEqualTo(1.0);
            assertThat(tag(second)).isEqualTo(2.0);
            assertThat(j.attempts()).isZero();
            assertThat(j.maxAttempts()).isEqualTo(Job.DEFAULT_MAX_ATTEMPTS);
            assertThat(json(j.payload())).isEqualTo(json("{\"text\":\"hi\"}"));
            assertThat(j.lease()).isEmpty();
            assertThat(j.runAt()).isBetween(before, after);
            assertThat(j.createdAt()).isBetween(before, after);
            assertThat(j.startedAt()).isEmpty();
            assertThat(j.lastError()).isEmpty();
            assertThat(second.id()).isGreaterThan(j.id());
            assertThat(store().get(j.id())).contains(j);
        }

        @Test
        void aDelayedJobIsScheduledAtNowPlusTheDelayWithoutATagOrACharge() {
            Instant before = storeNow();
            Job delayed = delayed("acme", 10);
            Instant after = storeNow();

            assertThat(delayed.state()).isEqualTo(JobState.SCHEDULED);
            assertThat(delayed.vtime()).isEmpty();
            assertThat(delayed.runAt()).isBetween(before.plusSeconds(10), after.plusSeconds(10));
            assertThat(claim(W1, 10)).as("a scheduled job is not claimable").isEmpty();
            assertThat(tag(enqueue("acme"))).as("the delayed job charged the tenant nothing").isEqualTo(1.0);
        }

        @Test
        void aFullBatchGetsConsecutiveTagsAndIdsInPayloadOrder() {
            List<String> payloads = IntStream.range(0, NewJobBatch.MAX_SIZE).mapToObj(i -> "{\"i\": " + i + "}").toList();
            List<JobId> ids = store().enqueueBatch(new NewJobBatch(TenantId.of("bulk"), Q, TASK, payloads, 3, Duration.ZERO));

            assertThat(ids).hasSize(NewJobBatch.MAX_SIZE).isSorted().doesNotHaveDuplicates();
            for (int i : new int[] {0, 1, 499, 999}) {
                Job j = current(ids.get(i));
                assertThat(j.state()).isEqualTo(JobState.QUEUED);
                assertThat(tag(j)).isCloseTo(i + 1.0, within(1e-9));
                assertThat(json(j.payload())).isEqualTo(json("{\"i\":" + i + "}"));
                assertThat(j.maxAttempts()).isEqualTo(3);
            }
            assertThat(tag(enqueue("bulk"))).isCloseTo(1001.0, within(1e-9));
        }

        @Test
        void aDelayedBatchIsScheduled() {
            List<JobId> ids = store().enqueueBatch(
                    new NewJobBatch(TenantId.of("bulk"), Q, TASK, List.of("{}", "[1]"), 3, Duration.ofMinutes(1)));

            assertThat(ids).hasSize(2);
            assertThat(ids).allSatisfy(id -> {
                assertThat(current(id).state()).isEqualTo(JobState.SCHEDULED);
                assertThat(current(id).vtime()).isEmpty();
            });
        }

        @Test
        void aBatchWithOneUnstorablePayloadIsRefusedAndWritesNothing() {
            List<String> payloads = IntStream.range(0, 10).mapToObj(i -> i == 5 ? "{\"bad\": \"a\\u0000b\"}" : "{}").toList();

            assertThatThrownBy(() -> store().enqueueBatch(new NewJobBatch(TenantId.of("t"), Q, TASK, payloads, 3, Duration.ZERO)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("payload");
            assertThat(store().list(JobQuery.firstPage())).isEmpty();
        }

        @Test
        void aPayloadThatIsNotJsonOrHoldsANulEscapeOrAnOutOfRangeNumberIsRefused() {
            for (String payload : List.of("not json", "{\"k\\u0000\": 1}", "{\"lone\": \"\\ud800\"}",
                    "{\"n\": 1e131072}", "[1e-16384]", "[" + "1e131071,".repeat(9) + "1e131071]",
                    "[".repeat(20_000) + "]".repeat(20_000))) {
                assertThatThrownBy(() -> store().enqueue(NewJob.of(TenantId.of("t"), Q, TASK, payload)))
                        .as(payload).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("payload");
            }
            assertThat(store().list(JobQuery.firstPage())).isEmpty();
        }

        @Test
        void aRepeatedIdempotencyKeyReturnsTheOriginalAndChargesNothing() {
            EnqueueResult first = store().enqueue(job("acme").withIdempotencyKey("order-42"));
            EnqueueResult again = store().enqueue(
                    NewJob.of(TenantId.of("acme"), Q, TASK, "{\"other\": true}").withIdempotencyKey("order-42"));

            assertThat(first).isInstanceOf(EnqueueResult.Created.class);
            assertThat(again).isEqualTo(new EnqueueResult.Existing(first.job()));
            assertThat(store().list(JobQuery.firstPage())).hasSize(1);
            assertThat(tag(enqueue("acme"))).as("the repeat charged the tenant nothing").isEqualTo(2.0);
        }

        @Test
        void idempotencyKeysAreScopedPerTenant() {
            Job a = store().enqueue(job("a").withIdempotencyKey("k")).job();
            EnqueueResult b = store().enqueue(job("b").withIdempotencyKey("k"));

            assertThat(b).isInstanceOf(EnqueueResult.Created.class);
            assertThat(b.job().id()).isNotEqualTo(a.id());
            assertThat(b.job().idempotencyKey()).contains("k");
        }
    }

    @Nested
    class Claim {
        @Test
        void tenantsInterleaveByStartTagAndTiesGoToTheOlderJob() {
            for (int i = 0; i < 3; i++) enqueue("a");
            for (int i = 0; i < 3; i++) enqueue("b");

            List<Job> claimed = claim(W1, 10);

            // a holds 1, 2, 3; b arrived with V = a's head tag 1, so it got 2, 3, 4
            assertThat(claimed).extracting(j -> j.tenant().value()).containsExactly("a", "a", "b", "a", "b", "b");
            assertThat(claimed).extracting(JobStoreContract::tag).containsExactly(1.0, 2.0, 2.0, 3.0, 3.0, 4.0);
        }

        @Test
        void aTenantArrivingAtAnEmptyQueueStartsFromTheHighestTagHandedOut() {
            enqueue("a");
            enqueue("a");
            claim(W1, 10);

            assertThat(tag(enqueue("b"))).isEqualTo(3.0);
        }

        @Test
        void aClaimTakesUpToItsLimitAndLeasesEachJobToTheWorker() {
            List<Job> queued = List.of(enqueue("t"), enqueue("t"), enqueue("t"));
            Instant before = storeNow();
            List<Job> claimed = claim(W1, 2);
            Instant after = storeNow();

            assertThat(claimed).extracting(Job::id).containsExactly(queued.get(0).id(), queued.get(1).id());
            for (Job j : claimed) {
                assertThat(j.state()).isEqualTo(JobState.RUNNING);
                assertThat(j.attempts()).isEqualTo(1);
                assertThat(j.lockedBy()).contains(W1);
                assertThat(j.lease().orElseThrow().expiry()).isBetween(before.plus(LEASE), after.plus(LEASE));
                assertThat(j.startedAt().orElseThrow()).isBetween(before, after);
                assertThat(j.fencingToken()).isEqualTo(new FencingToken(j.id(), W1, 1));
                assertThat(current(j.id())).isEqualTo(j);
            }
            assertThat(current(queued.get(2).id()).state()).isEqualTo(JobState.QUEUED);
        }

        @Test
        void onlyQueuedJobsOfTheRequestedQueuesAreClaimed() {
            Job other = store().enqueue(NewJob.of(TenantId.of("t"), OTHER, TASK, "{}")).job();
            store().enqueue(job("t").withDelay(Duration.ofHours(1)));
            Job running = running();

            assertThat(claim(W2, 10)).as("scheduled, running and other queues' jobs are not claimable").isEmpty();
            assertThat(store().claim(new ClaimRequest(List.of(Q, OTHER), W2, 10, LEASE)))
                    .extracting(Job::id).containsExactly(other.id());
            assertThat(current(running.id())).isEqualTo(running);
        }

        @Test
        void weightsApplyToTagsHandedOutAfterwards() {
            assertThat(store().setWeight(TenantId.of("heavy"), Q, TenantWeight.of(4)))
                    .isEqualTo(new TenantSettings(TenantId.of("heavy"), Q, TenantWeight.of(4), Optional.empty()));
            Job first = enqueue("heavy");
            store().setWeight(TenantId.of("heavy"), Q, TenantWeight.of(2));

            assertThat(tag(first)).isEqualTo(0.25);
            assertThat(tag(enqueue("heavy"))).isEqualTo(0.75);
            assertThat(tag(current(first.id()))).as("queued jobs keep their tag").isEqualTo(0.25);
        }

        @Test
        void weightsAreKeptPerQueue() {
            store().setWeight(TenantId.of("t"), OTHER, TenantWeight.of(4));

            assertThat(tag(enqueue("t"))).isEqualTo(1.0);
            assertThat(tag(store().enqueue(NewJob.of(TenantId.of("t"), OTHER, TASK, "{}")).job())).isEqualTo(0.25);
        }

        @Test
        void runsLeasedToAWorkerAreItsRunningJobsOldestClaimFirst() {
            Job first = running();
            advanceTime(Duration.ofSeconds(1));
            Job second = running();
            store().enqueue(job("t"));
            Job others = claimOne(W2);
            Job done = running();
            applied(store().complete(done.fencingToken(), Optional.empty()));

            // by token: advanceTime may move the stored times of the rows
            assertThat(store().runsLeasedTo(W1, 10)).extracting(Job::fencingToken)
                    .containsExactly(first.fencingToken(), second.fencingToken());
            assertThat(store().runsLeasedTo(W1, 1)).extracting(Job::fencingToken).containsExactly(first.fencingToken());
            assertThat(store().runsLeasedTo(W2, 10)).extracting(Job::fencingToken).containsExactly(others.fencingToken());
            assertThat(store().runsLeasedTo(WorkerId.of("nobody"), 10)).isEmpty();
            assertThatThrownBy(() -> store().runsLeasedTo(W1, 0)).isInstanceOf(IllegalArgumentException.class);
        }
        @Test
        void releasedRunsAreQueuedAgainAsIfNeverClaimedAndAStaleTokenChangesNothing() {
            Job first = running();
            Job cancelled = running();
            store().cancel(cancelled.id());
            Job releasedEarlier = running();
            FencingToken stale = releasedEarlier.fencingToken();
            assertThat(store().release(List.of(stale))).isEqualTo(1);

            assertThat(store().release(List.of(first.fencingToken(), cancelled.fencingToken(), stale))).isEqualTo(2);

            Job queued = current(first.id());
            assertThat(queued.state()).isEqualTo(JobState.QUEUED);
            assertThat(queued.attempts()).isZero();
            assertThat(current(cancelled.id()).state()).isEqualTo(JobState.CANCELLED);
            // the given-back jobs keep their fair tags, so they are claimed first, with the attempt handed out again
            assertThat(claim(W2, 10)).extracting(Job::id).containsExactly(first.id(), releasedEarlier.id());
            assertThat(current(first.id()).fencingToken()).isEqualTo(new FencingToken(first.id(), W2, 1));
            // the old token (W1, attempt 1) is stale now: releasing it again, or heartbeating it, changes nothing
            assertThat(store().release(List.of(first.fencingToken()))).isZero();
            assertThat(store().heartbeat(List.of(first.fencingToken()), Duration.ofSeconds(30))).contains(first.fencingToken());
            assertThat(current(first.id()).state()).isEqualTo(JobState.RUNNING);
            assertThat(store().release(List.of())).isZero();
        }
    }

    @Nested
    class FencedWrites {
        @Test
        void completeMarksTheRunDoneWithItsResultAndReleasesTheLease() {
            Job run = running();
            Instant before = storeNow();
            Job done = applied(store().complete(run.fencingToken(), Optional.of("{\"words\": 3}")));
            Instant after = storeNow();

            assertThat(done.state()).isEqualTo(JobState.DONE);
            assertThat(json(done.result().orElseThrow())).isEqualTo(json("{\"words\":3}"));
            assertThat(done.lease()).isEmpty();
            assertThat(done.finishedAt().orElseThrow()).isBetween(before, after);
            assertThat(done.attempts()).isEqualTo(1);
            assertThat(done.lastError()).isEmpty();
            assertThat(current(run.id())).isEqualTo(done);
        }

        @Test
        void completeWithoutAResultLeavesItAbsentAndKeepsAnEarlierAttemptsError() {
            Job first = running();
            store().fail(first.fencingToken(), "flaky", RETRY_IN_1S);
            advanceTime(RETRY_DUE);
            store().promoteDue(10);
            Job second = claimOne(W1);

            Job done = applied(store().complete(second.fencingToken(), Optional.empty()));

            assertThat(done.result()).isEmpty();
            assertThat(done.lastError()).contains("flaky");
        }

        @Test
        void anotherWorkersTokenIsRejectedAndChangesNothing() {
            Job run = running();
            FencingToken forged = new FencingToken(run.id(), W2, run.attempts());

            assertRejectedEverywhere(forged, run);
        }

        @Test
        void theSameWorkersTokenFromAnOlderAttemptIsRejected() {
            Job first = running();
            Job second = reclaimAfterLeaseExpiry(W1);
            assertThat(second.attempts()).isEqualTo(2);
            assertThat(second.lockedBy()).contains(W1);

            assertRejectedEverywhere(first.fencingToken(), second);
            assertThat(store().heartbeat(List.of(first.fencingToken(), second.fencingToken()), LEASE))
                    .containsExactly(first.fencingToken());
            assertThat(store().complete(second.fencingToken(), Optional.empty()).applied()).isTrue();
        }

        @Test
        void aTokenOfARunThatAlreadyEndedIsRejected() {
            Job completed = running();
            Job done = applied(store().complete(completed.fencingToken(), Optional.of("1")));
            assertRejectedEverywhere(completed.fencingToken(), done);

            Job failed = running();
            Job scheduled = applied(store().fail(failed.fencingToken(), "boom", RETRY_IN_1S));
            assertRejectedEverywhere(failed.fencingToken(), scheduled);
        }

        @Test
        void aTokenForAnUnknownJobIsRejectedWithNoCurrentRow() {
            FencingToken ghost = new FencingToken(JobId.of(999_999), W1, 1);

            assertThat(store().complete(ghost, Optional.empty())).isEqualTo(new FencedWrite.Rejected(ghost, Optional.empty()));
            assertThat(store().fail(ghost, "x", DEAD)).isEqualTo(new FencedWrite.Rejected(ghost, Optional.empty()));
            assertThat(store().heartbeat(List.of(ghost), LEASE)).containsExactly(ghost);
        }

        /** complete, fail and heartbeat all refuse {@code stale}, and the row stays exactly {@code now}. */
        void assertRejectedEverywhere(FencingToken stale, Job now) {
            assertThat(store().complete(stale, Optional.of("{\"stale\": true}")))
                    .isEqualTo(new FencedWrite.Rejected(stale, Optional.of(now)));
            assertThat(store().fail(stale, "stale", DEAD)).isEqualTo(new FencedWrite.Rejected(stale, Optional.of(now)));
            assertThat(store().fail(stale, "stale", RETRY_IN_1S)).isEqualTo(new FencedWrite.Rejected(stale, Optional.of(now)));
            assertThat(store().heartbeat(List.of(stale), Duration.ofHours(1))).containsExactly(stale);
            assertThat(current(now.id())).isEqualTo(now);
        }

        @Test
        void aHeartbeatExtendsEveryLiveLeaseAndReportsTheLostOnes() {
            for (int i = 0; i < 3; i++) enqueue("t");
            List<Job> runs = claim(W1, 3);
            store().complete(runs.get(0).fencingToken(), Optional.empty());
            advanceTime(Duration.ofSeconds(20));

            Instant before = storeNow();
            assertThat(store().heartbeat(runs.stream().map(Job::fencingToken).toList(), Duration.ofMinutes(5)))
                    .containsExactly(runs.get(0).fencingToken());
            Instant after = storeNow();
            assertThat(store().heartbeat(List.of(), LEASE)).isEmpty();

            for (Job j : runs.subList(1, 3)) {
                assertThat(current(j.id()).lease().orElseThrow().expiry())
                        .isBetween(before.plus(Duration.ofMinutes(5)), after.plus(Duration.ofMinutes(5)));
            }
            advanceTime(LEASE);
            assertThat(reap(10)).as("extended leases outlive their first expiry").isZero();
        }
    }

    /** {@link JobStore#recordOutcomes}: each write fenced on its own, all answered in order. */
    @Nested
    class BatchedOutcomes {
        @Test
        void aBatchAppliesEachOutcomeAndRefusesOnlyTheStaleToken() {
            Job toComplete = running();
            Job toRetry = running();
            Job toBury = running();
            Job stale = running();
            FencingToken forged = new FencingToken(stale.id(), W2, stale.attempts());
            Instant before = storeNow();

            List<FencedWrite> answers = store().recordOutcomes(List.of(
                    new OutcomeWrite.Complete(toComplete.fencingToken(), Optional.of("{\"ok\": true}")),
                    new OutcomeWrite.Fail(forged, "not mine", DEAD),
                    new OutcomeWrite.Fail(toRetry.fencingToken(), "flaky", RETRY_IN_1S),
                    new OutcomeWrite.Fail(toBury.fencingToken(), "bad input", DEAD)));

            assertThat(answers).hasSize(4);
            Job done = applied(answers.get(0));
            assertThat(done.id()).isEqualTo(toComplete.id());
            assertThat(done.state()).isEqualTo(JobState.DONE);
            assertThat(json(done.result().orElseThrow())).isEqualTo(json("{\"ok\": true}"));
            assertThat(answers.get(1)).isEqualTo(new FencedWrite.Rejected(forged, Optional.of(stale)));
            Job retried = applied(answers.get(2));
            assertThat(retried.state()).isEqualTo(JobState.SCHEDULED);
            assertThat(retried.runAt()).isAfterOrEqualTo(before.plusSeconds(1));
            assertThat(retried.lastError()).contains("flaky");
            Job dead = applied(answers.get(3));
            assertThat(dead.state()).isEqualTo(JobState.DEAD);
            assertThat(dead.lease()).isEmpty();
            assertThat(current(stale.id())).as("the stale token changed nothing").isEqualTo(stale);
            for (FencedWrite a : List.of(answers.get(0), answers.get(2), answers.get(3))) {
                Job j = applied(a);
                assertThat(current(j.id())).isEqualTo(j);
            }
        }

        @Test
        void oneResultTheStoreRefusesCostsOnlyThatResult() {
            Job refused = running();
            Job fine = running();

            List<FencedWrite> answers = store().recordOutcomes(List.of(
                    new OutcomeWrite.Complete(refused.fencingToken(), Optional.of("{\"n\": 1e131072}")),
                    new OutcomeWrite.Complete(fine.fencingToken(), Optional.of("{\"n\": 1}"))));

            assertThat(applied(answers.get(0)).result()).isEmpty();
            assertThat(applied(answers.get(0)).lastError()).hasValueSatisfying(e -> assertThat(e).contains("result not stored"));
            assertThat(applied(answers.get(1)).result()).hasValueSatisfying(r -> assertThat(json(r)).isEqualTo(json("{\"n\": 1}")));
        }

        @Test
        void anEmptyBatchWritesNothingAndAJobTwiceIsRefused() {
            assertThat(store().recordOutcomes(List.of())).isEmpty();
            Job run = running();
            OutcomeWrite once = new OutcomeWrite.Complete(run.fencingToken(), Optional.empty());
            assertThatThrownBy(() -> store().recordOutcomes(List.of(once, once)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("job " + run.id().value() + " twice");
            assertThat(current(run.id()).state()).isEqualTo(JobState.RUNNING);
        }
    }

    /** The store writes the decision it is given, whatever attempts the job has left; it decides nothing. */
    @Nested
    class Failures {
        @Test
        void aRetryAfterIsScheduledAtTheStoresNowPlusExactlyTheDelay() {
            Job run = running();
            advanceTime(Duration.ofMinutes(2));
            Instant before = storeNow();
            Job failed = applied(store().fail(run.fencingToken(), "downstream 503",
                    new RetryDecision.RetryAfter(Duration.ofMillis(7_250))));
            Instant after = storeNow();

            assertThat(failed.state()).isEqualTo(JobState.SCHEDULED);
            assertThat(failed.lastError()).contains("downstream 503");
            assertThat(failed.lease()).isEmpty();
            assertThat(failed.finishedAt()).isEmpty();
            assertThat(failed.attempts()).isEqualTo(1);
            // counted from the failure, not from the job's run_at two minutes ago
            assertThat(failed.runAt()).isBetween(before.plusMillis(7_250), after.plusMillis(7_250));
            assertThat(current(run.id())).isEqualTo(failed);
        }

        @Test
        void aRetryAfterIsObeyedOnTheLastAllowedAttempt() {
            store().enqueue(job("t").withMaxAttempts(1));
            Job run = claimOne(W1);
            Instant before = storeNow();
            Job failed = applied(store().fail(run.fencingToken(), "again", new RetryDecision.RetryAfter(Duration.ZERO)));
            Instant after = storeNow();

            assertThat(failed.state()).as("attempt 1 of 1, yet the decision was to retry").isEqualTo(JobState.SCHEDULED);
            assertThat(failed.runAt()).isBetween(before, after);
            assertThat(store().promoteDue(10)).isEqualTo(1);
            assertThat(claimOne(W1).attempts()).isEqualTo(2);
        }

        @Test
        void deadIsDeadAtOnceWhateverAttemptsAreLeft() {
            Job run = running();
            Instant before = storeNow();
            Job dead = applied(store().fail(run.fencingToken(), "bad input", DEAD));
            Instant after = storeNow();

            assertThat(dead.state()).isEqualTo(JobState.DEAD);
            assertThat(dead.attempts()).isEqualTo(1);
            assertThat(dead.maxAttempts()).isEqualTo(Job.DEFAULT_MAX_ATTEMPTS);
            assertThat(dead.finishedAt().orElseThrow()).isBetween(before, after);
            assertThat(dead.lastError()).contains("bad input");
            assertThat(dead.lease()).isEmpty();
            assertThat(current(run.id())).isEqualTo(dead);
        }

        @Test
        void theErrorIsStoredSanitisedAndBoundedNeverRefused() {
            Job run = running();
            String nasty = "nul\u0000 lone\ud800 emoji\uD83D\uDE00 " + "é".repeat(50_000);

            Job failed = applied(store().fail(run.fencingToken(), nasty, RETRY_IN_1S));

            assertThat(failed.lastError()).contains(StoredText.sanitize(nasty, JobStore.MAX_ERROR_BYTES));
            assertThat(StoredText.utf8Length(failed.lastError().orElseThrow())).isLessThanOrEqualTo(JobStore.MAX_ERROR_BYTES);
            assertThat(current(run.id()).lastError()).isEqualTo(failed.lastError());
        }
    }

    @Nested
    class Results {
        /** A JSON string of exactly {@code bytes} UTF-8 bytes, quotes included. */
        static String jsonStringOf(int bytes) {
            return "\"" + "x".repeat(bytes - 2) + "\"";
        }

        @Test
        void aResultOfExactlyTheCapIsStored() {
            Job run = running();
            String result = jsonStringOf(JobStore.MAX_RESULT_BYTES);

            Job done = applied(store().complete(run.fencingToken(), Optional.of(result)));

            assertThat(done.result()).hasValueSatisfying(r -> assertThat(json(r)).isEqualTo(json(result)));
            assertThat(done.lastError()).isEmpty();
        }

        @Test
        void aResultOverTheCapIsDroppedTheRunIsDoneAndLastErrorSaysWhy() {
            Job run = running();

            Job done = applied(store().complete(run.fencingToken(), Optional.of(jsonStringOf(JobStore.MAX_RESULT_BYTES + 1))));

            assertThat(done.state()).isEqualTo(JobState.DONE);
            assertThat(done.result().map(String::length)).as("the result is not stored").isEmpty();
            assertThat(done.lastError().orElseThrow()).contains("result not stored")
                    .contains(String.valueOf(JobStore.MAX_RESULT_BYTES + 1)).contains(String.valueOf(JobStore.MAX_RESULT_BYTES));
            assertThat(current(run.id())).isEqualTo(done);
        }

        @Test
        void nulAndLoneSurrogatesInAResultAreReplacedNotRefused() {
            Job run = running();

            Job done = applied(store().complete(run.fencingToken(),
                    Optional.of("{\"s\": \"a\\u0000b\", \"k\\u0000\": \"raw\u0000nul\", \"lone\": \"\\ud800\", "
                            + "\"pair\": \"\\ud83d\\ude00\", \"text\": \"\\\\u0000 stays text\"}")));

            JsonNode stored = json(done.result().orElseThrow());
            assertThat(stored.get("s").textValue()).isEqualTo("a\uFFFDb");
            assertThat(stored.get("k\uFFFD").textValue()).isEqualTo("raw\uFFFDnul");
            assertThat(stored.get("lone").textValue()).isEqualTo("\uFFFD");
            assertThat(stored.get("pair").textValue()).isEqualTo("\uD83D\uDE00");
            assertThat(stored.get("text").textValue()).isEqualTo("\\u0000 stays text");
            assertThat(stored.size()).isEqualTo(5);
            assertThat(done.lastError()).isEmpty();
        }

        @Test
        void aResultTheStoreCannotHoldStillCompletesTheRun() {
            for (String unstorable : List.of("{\"n\": 1e131072}", "{\"n\": 1e-16384}", "not json")) {
                Job run = running();

                Job done = applied(store().complete(run.fencingToken(), Optional.of(unstorable)));

                assertThat(done.state()).as(unstorable).isEqualTo(JobState.DONE);
                assertThat(done.result()).as(unstorable).isEmpty();
                assertThat(done.lastError()).as(unstorable).hasValueSatisfying(e -> assertThat(e).contains("result not stored"));
            }
        }

        /**
         * Ten copies of 1e131071: a few bytes of JSON that jsonb stores compactly but renders as 1.3 MB
         * of digits; 10,000 copies would render past PostgreSQL's 1 GB string limit, and every read of
         * the row would fail. The run is done; the result is not stored.
         */
        @Test
        void aResultWhoseNumbersWouldRenderTooLongIsDroppedAndTheRunIsDone() {
            Job run = running();
            String result = "[" + String.join(",", java.util.Collections.nCopies(10, "1e131071")) + "]";

            Job done = applied(store().complete(run.fencingToken(), Optional.of(result)));

            assertThat(done.state()).isEqualTo(JobState.DONE);
            assertThat(done.result()).isEmpty();
            assertThat(done.lastError().orElseThrow()).contains("result not stored").contains("render");
            assertThat(current(run.id())).isEqualTo(done);
        }

        @Test
        void numbersAtTheEdgeOfTheStoresRangeAreStored() {
            Job run = running();

            Job done = applied(store().complete(run.fencingToken(), Optional.of("[1e131071, 1e-16383]")));

            assertThat(done.result()).isPresent();
            assertThat(done.lastError()).isEmpty();
        }
    }

    /** Reaping asks the decider about each expired run and writes its answer, naming the expired lease. */
    @Nested
    class Reap {
        /** The (attempt, maxAttempts) pairs the store asked about. */
        final List<List<Integer>> asked = new java.util.ArrayList<>();

        /** Records what it is asked, then answers {@code decision}. */
        ExpiredLeaseDecider answering(RetryDecision decision) {
            return (attempt, maxAttempts) -> {
                asked.add(List.of(attempt, maxAttempts));
                return decision;
            };
        }

        @Test
        void anExpiredLeaseIsScheduledAtNowPlusTheDecidersDelayNamingTheLeaseAndItsOwner() {
            Job run = running();
            advanceTime(LEASE.minusSeconds(2));
            ExpiredLeaseDecider inThreeSeconds = answering(new RetryDecision.RetryAfter(Duration.ofSeconds(3)));
            assertThat(store().reapExpiredLeases(10, inThreeSeconds)).as("a live lease is not reaped").isZero();
            assertThat(current(run.id()).lease()).map(l -> l.owner()).contains(W1);
            assertThat(asked).as("nothing to decide for a live lease").isEmpty();

            advanceTime(Duration.ofSeconds(3));
            Instant before = storeNow();
            assertThat(store().reapExpiredLeases(10, inThreeSeconds)).isEqualTo(1);
            Instant after = storeNow();

            assertThat(asked).containsExactly(List.of(1, Job.DEFAULT_MAX_ATTEMPTS));
            Job reaped = current(run.id());
            assertThat(reaped.state()).isEqualTo(JobState.SCHEDULED);
            assertThat(reaped.lease()).isEmpty();
            assertThat(reaped.attempts()).isEqualTo(1);
            assertThat(reaped.finishedAt()).isEmpty();
            assertThat(reaped.runAt()).isBetween(before.plusSeconds(3), after.plusSeconds(3));
            assertThat(reaped.lastError().orElseThrow()).contains("lease expired").contains("w1").contains("attempt 1 of 5");
            assertThat(store().reapExpiredLeases(10, inThreeSeconds)).as("reaped once").isZero();
            assertThat(asked).hasSize(1);
        }

        @Test
        void deadFromTheDeciderIsDeadWhateverAttemptsAreLeft() {
            store().enqueue(job("t").withMaxAttempts(2));
            claimOne(W1);
            Job second = reclaimAfterLeaseExpiry(W2);
            advanceTime(LEASE.plusSeconds(1));
            Instant before = storeNow();

            assertThat(store().reapExpiredLeases(10, answering(DEAD))).isEqualTo(1);
            Instant after = storeNow();

            assertThat(asked).containsExactly(List.of(2, 2));
            Job dead = current(second.id());
            assertThat(dead.state()).isEqualTo(JobState.DEAD);
            assertThat(dead.attempts()).isEqualTo(2);
            assertThat(dead.finishedAt().orElseThrow()).isBetween(before, after);
            assertThat(dead.lastError().orElseThrow()).contains("lease expired").contains("w2").contains("attempt 2 of 2");

            Job early = running();
            advanceTime(LEASE.plusSeconds(1));
            assertThat(store().reapExpiredLeases(10, answering(DEAD))).isEqualTo(1);
            assertThat(current(early.id()).state()).as("dead at attempt 1 of 5: the decider said so").isEqualTo(JobState.DEAD);
        }

        @Test
        void aRetryFromTheDeciderIsObeyedOnTheLastAllowedAttempt() {
            store().enqueue(job("t").withMaxAttempts(1));
            Job run = claimOne(W1);
            advanceTime(LEASE.plusSeconds(1));

            assertThat(store().reapExpiredLeases(10, answering(RETRY_IN_1S))).isEqualTo(1);

            assertThat(asked).containsExactly(List.of(1, 1));
            assertThat(current(run.id()).state()).isEqualTo(JobState.SCHEDULED);
        }

        @Test
        void aDeciderThatThrowsLeavesTheRunsRunning() {
            Job run = running();
            advanceTime(LEASE.plusSeconds(1));
            Job expired = current(run.id());

            assertThatThrownBy(() -> store().reapExpiredLeases(10, (attempt, max) -> {
                throw new IllegalStateException("decider bug");
            })).isInstanceOf(RuntimeException.class);

            assertThat(current(run.id())).isEqualTo(expired);
            assertThat(expired.state()).isEqualTo(JobState.RUNNING);
            assertThat(reap(10)).isEqualTo(1);
        }

        @Test
        void reapTakesAtMostItsLimit() {
            for (int i = 0; i < 3; i++) enqueue("t");
            claim(W1, 3);
            advanceTime(LEASE.plusSeconds(1));

            assertThat(reap(2)).isEqualTo(2);
            assertThat(reap(2)).isEqualTo(1);
            assertThat(store().countsByQueueAndState().get(Q)).isEqualTo(Map.of(JobState.SCHEDULED, 3L));
        }
    }

    @Nested
    class Promote {
        @Test
        void dueJobsAreQueuedWithFreshFairTagsAndTheOthersStay() {
            enqueue("a");
            enqueue("a");
            Job soon = delayed("b", 5);
            Job later = store().enqueue(job("c").withDelay(Duration.ofHours(1))).job();
            assertThat(store().promoteDue(100)).as("nothing is due yet").isZero();
            advanceTime(Duration.ofSeconds(6));

            assertThat(store().promoteDue(100)).isEqualTo(1);

            Job b = current(soon.id());
            assertThat(b.state()).isEqualTo(JobState.QUEUED);
            // V is a's head tag 1.0, so b starts at 1 + 1 = 2, level with a's backlog, not behind it
            assertThat(tag(b)).isEqualTo(2.0);
            assertThat(current(later.id()).state()).isEqualTo(JobState.SCHEDULED);
            assertThat(store().promoteDue(100)).isZero();
        }

        @Test
        void jobsPromotedTogetherIntoAnEmptyQueueStartFromTheSameVirtualTime() {
            enqueue("a");
            claimOne(W1);
            Job a = delayed("a", 5);
            Job b = delayed("b", 5);
            advanceTime(Duration.ofSeconds(6));

            assertThat(store().promoteDue(100)).isEqualTo(2);

            // nothing was queued, so V is the highest tag handed out (a's 1.0) for both; neither is charged
            // for the other being promoted in the same pass
            assertThat(tag(current(a.id()))).isEqualTo(2.0);
            assertThat(tag(current(b.id()))).isEqualTo(2.0);
        }

        @Test
        void aTenantsJobsPromotedTogetherGetConsecutiveTagsInRunAtOrder() {
            Job later = delayed("t", 3);
            Job sooner = delayed("t", 2);
            advanceTime(Duration.ofSeconds(4));

            assertThat(store().promoteDue(100)).isEqualTo(2);

            assertThat(tag(current(sooner.id()))).isEqualTo(1.0);
            assertThat(tag(current(later.id()))).isEqualTo(2.0);
        }

        @Test
        void promotionTakesAtMostItsLimitOldestFirst() {
            Job second = delayed("t", 2);
            Job first = delayed("t", 1);
            advanceTime(Duration.ofSeconds(3));

            assertThat(store().promoteDue(1)).isEqualTo(1);
            assertThat(current(first.id()).state()).isEqualTo(JobState.QUEUED);
            assertThat(current(second.id()).state()).isEqualTo(JobState.SCHEDULED);
            assertThat(store().promoteDue(1)).isEqualTo(1);
        }

        @Test
        void theLimitAppliesPerQueueSoABusyQueueCannotCrowdOutAnother() {
            Job busy1 = delayed("t", 1);
            Job busy2 = delayed("t", 1);
            Job other = store().enqueue(NewJob.of(TenantId.of("t"), OTHER, TASK, "{}").withDelay(Duration.ofSeconds(2))).job();
            advanceTime(Duration.ofSeconds(3));

            assertThat(store().promoteDue(1)).as("one per queue").isEqualTo(2);
            assertThat(current(other.id()).state()).as("the later queue is not starved by the busier one")
                    .isEqualTo(JobState.QUEUED);
            assertThat(List.of(current(busy1.id()).state(), current(busy2.id()).state()))
                    .containsExactlyInAnyOrder(JobState.QUEUED, JobState.SCHEDULED);
        }
    }

    /** The fairness scenarios, on this store. */
    @Nested
    class Fairness extends FairnessContract {
        @Override
        protected JobStore store() {
            return JobStoreContract.this.store();
        }

        @Override
        protected void advanceTime(Duration by) {
            JobStoreContract.this.advanceTime(by);
        }
    }

    /** Retention of finished jobs, on this store. */
    @Nested
    class Retain extends RetentionContract {
        @Override
        protected JobStore store() {
            return JobStoreContract.this.store();
        }

        @Override
        protected void advanceTime(Duration by) {
            JobStoreContract.this.advanceTime(by);
        }
    }

    /** The live workers registry, on this store. */
    @Nested
    class Workers extends WorkersContract {
        @Override
        protected JobStore store() {
            return JobStoreContract.this.store();
        }

        @Override
        protected void advanceTime(Duration by) {
            JobStoreContract.this.advanceTime(by);
        }
    }

    /** Priorities within a tenant, on this store. */
    @Nested
    class Priorities extends PriorityContract {
        @Override
        protected JobStore store() {
            return JobStoreContract.this.store();
        }

        @Override
        protected void advanceTime(Duration by) {
            JobStoreContract.this.advanceTime(by);
        }
    }

    /** Tenants' API keys, on this store. */
    @Nested
    class ApiKeys extends ApiKeysContract {
        @Override
        protected JobStore store() {
            return JobStoreContract.this.store();
        }
    }

    /** Cron schedules, on this store. */
    @Nested
    class Schedules extends SchedulesContract {
        @Override
        protected JobStore store() {
            return JobStoreContract.this.store();
        }
    }

    /** Cancelling, on this store. */
    @Nested
    class Cancel extends CancelContract {
        @Override
        protected JobStore store() {
            return JobStoreContract.this.store();
        }

        @Override
        protected void advanceTime(Duration by) {
            JobStoreContract.this.advanceTime(by);
        }
    }

    /** Fairness by work, on this store. */
    @Nested
    class WorkFairness extends WorkFairnessContract {
        @Override
        protected JobStore store() {
            return JobStoreContract.this.store();
        }

        @Override
        protected void advanceTime(Duration by) {
            JobStoreContract.this.advanceTime(by);
        }
    }

    /** The cap rules, on this store. */
    @Nested
    class Caps extends CapsContract {
        @Override
        protected JobStore store() {
            return JobStoreContract.this.store();
        }

        @Override
        protected void advanceTime(Duration by) {
            JobStoreContract.this.advanceTime(by);
        }
    }

    @Nested
    class RetryDead {
        @Test
        void aDeadJobIsRequeuedWithAFreshBudgetAndANewerAttempt() {
            store().enqueue(job("t").withMaxAttempts(1));
            Job run = claimOne(W1);
            store().fail(run.fencingToken(), "boom", new RetryDecision.Dead(RetryDecision.Cause.OUT_OF_ATTEMPTS));
            assertThat(current(run.id()).state()).isEqualTo(JobState.DEAD);
            enqueue("t");

            RetryResult r = store().retryDead(run.id());

            assertThat(r).isInstanceOf(RetryResult.Requeued.class);
            Job requeued = ((RetryResult.Requeued) r).job();
            assertThat(requeued.state()).isEqualTo(JobState.QUEUED);
            // the tenant's last tag is 2.0 (the job enqueued after it died), so it is charged one more
            assertThat(tag(requeued)).isEqualTo(3.0);
            assertThat(requeued.attempts()).isEqualTo(1);
            assertThat(requeued.maxAttempts()).isEqualTo(2);
            assertThat(requeued.finishedAt()).isEmpty();
            assertThat(current(run.id())).isEqualTo(requeued);

            claimOne(W1);
            Job again = claimOne(W1);
            assertThat(again.id()).isEqualTo(run.id());
            assertThat(again.attempts()).isEqualTo(2);
            assertThat(store().complete(run.fencingToken(), Optional.empty()))
                    .as("the first run's token stays stale").isInstanceOf(FencedWrite.Rejected.class);
        }

        @Test
        void aJobThatIsNotDeadIsLeftAloneAndAnUnknownIdIsNotFound() {
            Job run = running();
            Job done = applied(store().complete(run.fencingToken(), Optional.empty()));
            Job queued = enqueue("t");

            assertThat(store().retryDead(queued.id())).isEqualTo(new RetryResult.NotDead(queued));
            assertThat(store().retryDead(done.id())).isEqualTo(new RetryResult.NotDead(done));
            assertThat(store().retryDead(JobId.of(999_999))).isEqualTo(new RetryResult.NotFound(JobId.of(999_999)));
            assertThat(current(done.id())).isEqualTo(done);
        }
    }

    @Nested
    class Reads {
        @Test
        void getOfAnUnknownIdIsEmpty() {
            assertThat(store().get(JobId.of(999_999))).isEmpty();
        }

        @Test
        void listIsNewestFirstWithKeysetPagesAndFilters() {
            for (int i = 0; i < 5; i++) store().enqueue(job(i % 2 == 0 ? "even" : "odd"));
            store().enqueue(NewJob.of(TenantId.of("even"), OTHER, TASK, "{}"));
            List<Job> all = store().list(JobQuery.firstPage());
            assertThat(all).extracting(Job::id).isSortedAccordingTo((x, y) -> y.compareTo(x)).hasSize(6);
            List<JobId> ids = all.reversed().stream().map(Job::id).toList(); // oldest first

            List<Job> page1 = store().list(query(Optional.empty(), Optional.empty(), Optional.empty(), 2, Optional.empty()));
            List<Job> page2 = store().list(query(Optional.empty(), Optional.empty(), Optional.empty(), 2, Optional.of(page1.get(1).id())));
            List<Job> even = store().list(query(Optional.of(TenantId.of("even")), Optional.of(Q), Optional.of(JobState.QUEUED), 50, Optional.empty()));
            claimOne(W1);
            List<Job> running = store().list(query(Optional.empty(), Optional.empty(), Optional.of(JobState.RUNNING), 50, Optional.empty()));

            assertThat(page1).extracting(Job::id).containsExactly(ids.get(5), ids.get(4));
            assertThat(page2).extracting(Job::id).containsExactly(ids.get(3), ids.get(2));
            assertThat(even).extracting(Job::id).containsExactly(ids.get(4), ids.get(2), ids.get(0));
            assertThat(running).extracting(Job::id).containsExactly(ids.get(0));
        }

        @Test
        void aPageOfLargeJobsEndsAtTheCharacterBudgetAndTheNextTakesUpThere() {
            String big = "{\"big\": \"" + "x".repeat(1_000_000) + "\"}"; // a quarter of LIST_PAGE_CHARS, a little under
            List<JobId> ids = new ArrayList<>();
            for (int i = 0; i < 6; i++) ids.add(store().enqueue(NewJob.of(TenantId.of("t"), Q, TASK, big)).job().id());
            List<JobId> newestFirst = ids.reversed();

            List<Job> first = store().list(JobQuery.firstPage());
            List<Job> second = store().list(query(Optional.empty(), Optional.empty(), Optional.empty(), 50,
                    Optional.of(first.getLast().id())));

            assertThat(first).extracting(Job::id).containsExactlyElementsOf(newestFirst.subList(0, 4));
            assertThat(second).extracting(Job::id).containsExactlyElementsOf(newestFirst.subList(4, 6));
            assertThat(store().summaries(JobQuery.firstPage())).as("summaries carry no payload: no budget").hasSize(6);
        }

        @Test
        void resultsCountTowardsTheCharacterBudget() {
            String big = "{\"big\": \"" + "x".repeat(1_000_000) + "\"}";
            for (int i = 0; i < 3; i++) store().enqueue(NewJob.of(TenantId.of("t"), Q, TASK, big));
            for (int i = 0; i < 3; i++) {
                applied(store().complete(claimOne(W1).fencingToken(), Optional.of("[\"" + "y".repeat(1_000_000) + "\"]")));
            }

            assertThat(store().list(JobQuery.firstPage())).as("two jobs of 2,000,000 chars each, a third would pass 4 Mi")
                    .hasSize(2).allSatisfy(j -> assertThat(j.result()).isPresent());
        }

        @Test
        void listFiltersByTask() {
            store().enqueue(NewJob.of(TenantId.of("t"), Q, TaskName.of("email"), "{}"));
            Job report = store().enqueue(NewJob.of(TenantId.of("t"), Q, TaskName.of("report"), "{}")).job();
            store().enqueue(NewJob.of(TenantId.of("t"), Q, TaskName.of("email"), "{}"));

            List<Job> reports = store().list(new JobQuery(Optional.empty(), Optional.empty(), Optional.empty(),
                    Optional.of(TaskName.of("report")), 50, Optional.empty()));

            assertThat(reports).extracting(Job::id).containsExactly(report.id());
        }

        @Test
        void summariesArePagesOfListWithoutBodiesAndTheStartOfTheError() {
            for (int i = 0; i < 3; i++) store().enqueue(NewJob.of(TenantId.of("t"), Q, TASK, "{\"big\": \"" + "x".repeat(10_000) + "\"}"));
            Job run = claimOne(W1);
            store().fail(run.fencingToken(), "e".repeat(5_000), DEAD);
            JobQuery page = query(Optional.empty(), Optional.empty(), Optional.empty(), 2, Optional.empty());

            List<JobSummary> summaries = store().summaries(page);

            assertThat(summaries).extracting(JobSummary::id).isEqualTo(store().list(page).stream().map(Job::id).toList());
            JobSummary dead = store().summaries(query(Optional.empty(), Optional.empty(), Optional.of(JobState.DEAD), 5,
                    Optional.empty())).getFirst();
            assertThat(dead.id()).isEqualTo(run.id());
            assertThat(dead.lastErrorStart()).hasValue("e".repeat(JobSummary.ERROR_START));
            assertThat(dead.finishedAt()).isPresent();
            assertThat(summaries.getFirst().lastErrorStart()).isEmpty();
        }

        @Test
        void tenantActivityShowsSettingsAndLiveCountsBusiestFirst() {
            for (int i = 0; i < 3; i++) enqueue("big");
            enqueue("small");
            store().enqueue(job("idle").withDelay(Duration.ofHours(1)));
            store().configureTenant(TenantUpdate.weight(TenantId.of("small"), Q, new TenantWeight(2.5)));
            store().enqueue(NewJob.of(TenantId.of("big"), OTHER, TASK, "{}"));
            Job run = claimOne(W1); // big's oldest job (the first tag)
            assertThat(run.tenant()).isEqualTo(TenantId.of("big"));

            List<TenantActivity> all = store().tenantActivity(Optional.empty(), 10);

            assertThat(all).containsExactly(
                    new TenantActivity(Q, TenantId.of("big"), TenantWeight.DEFAULT, Optional.empty(), 2, 0, 1),
                    new TenantActivity(Q, TenantId.of("small"), new TenantWeight(2.5), Optional.empty(), 1, 0, 0),
                    new TenantActivity(OTHER, TenantId.of("big"), TenantWeight.DEFAULT, Optional.empty(), 1, 0, 0),
                    new TenantActivity(Q, TenantId.of("idle"), TenantWeight.DEFAULT, Optional.empty(), 0, 0, 0));
            assertThat(store().tenantActivity(Optional.of(TenantId.of("small")), 10)).extracting(TenantActivity::tenant)
                    .containsExactly(TenantId.of("small"));
            assertThat(store().tenantActivity(Optional.empty(), 2)).hasSize(2);
        }

        @Test
        void finishedPerMinuteCountsFinalStatesPerQueueAndTenant() {
            for (int i = 0; i < 3; i++) enqueue("a");
            enqueue("b");
            List<Job> runs = claim(W1, 4);
            for (Job r : runs) {
                if (r.tenant().equals(TenantId.of("b"))) store().fail(r.fencingToken(), "no", DEAD);
                else store().complete(r.fencingToken(), Optional.empty());
            }
            Job cancelled = enqueue("a");
            store().cancel(cancelled.id());
            Instant minute = store().get(cancelled.id()).orElseThrow().finishedAt().orElseThrow().truncatedTo(ChronoUnit.MINUTES);

            List<FinishedCount> all = store().finishedPerMinute(Optional.empty(), 5);
            List<FinishedCount> ofB = store().finishedPerMinute(Optional.of(TenantId.of("b")), 5);
            advanceTime(Duration.ofMinutes(10));

            assertThat(all).extracting(FinishedCount::state, FinishedCount::count).containsExactlyInAnyOrder(
                    tuple(JobState.DONE, 3L), tuple(JobState.DEAD, 1L), tuple(JobState.CANCELLED, 1L));
            assertThat(all).allSatisfy(c -> {
                assertThat(c.queue()).isEqualTo(Q);
                assertThat(c.minute()).isCloseTo(minute, within(1, ChronoUnit.MINUTES));
            });
            assertThat(ofB).extracting(FinishedCount::state, FinishedCount::count).containsExactly(tuple(JobState.DEAD, 1L));
            assertThat(store().finishedPerMinute(Optional.empty(), 5)).as("ten minutes later, out of a five-minute window").isEmpty();
        }

        @Test
        void countsAreByQueueAndStateAndOmitEmptyStates() {
            for (int i = 0; i < 4; i++) enqueue("t");
            store().enqueue(job("t").withDelay(Duration.ofHours(1)));
            store().enqueue(NewJob.of(TenantId.of("t"), OTHER, TASK, "{}"));
            List<Job> runs = claim(W1, 3);
            store().complete(runs.get(0).fencingToken(), Optional.empty());
            store().fail(runs.get(1).fencingToken(), "no", DEAD);

            assertThat(store().countsByQueueAndState()).isEqualTo(Map.of(
                    Q, Map.of(JobState.SCHEDULED, 1L, JobState.QUEUED, 1L, JobState.RUNNING, 1L, JobState.DONE, 1L,
                            JobState.DEAD, 1L),
                    OTHER, Map.of(JobState.QUEUED, 1L)));
            assertThat(store().liveCountsByQueue()).isEqualTo(Map.of(
                    Q, Map.of(JobState.SCHEDULED, 1L, JobState.QUEUED, 1L, JobState.RUNNING, 1L),
                    OTHER, Map.of(JobState.QUEUED, 1L)));
        }

        @Test
        void anEmptyStoreHasNoCountsAgesOrBacklogs() {
            assertThat(store().countsByQueueAndState()).isEmpty();
            assertThat(store().oldestRunnableAge()).isEmpty();
            assertThat(store().largestBacklogs(10)).isEmpty();
            store().ping();
        }

        @Test
        void backlogsRankTenantsByQueuedJobsLargestFirst() {
            for (int i = 0; i < 3; i++) enqueue("big");
            enqueue("small");
            enqueue("small");
            store().enqueue(job("later").withDelay(Duration.ofHours(1)));
            store().enqueue(NewJob.of(TenantId.of("x"), OTHER, TASK, "{}"));
            claimOne(W1); // one of big's

            assertThat(store().largestBacklogs(10)).containsExactly(
                    new Backlog(Q, TenantId.of("big"), 2), new Backlog(Q, TenantId.of("small"), 2),
                    new Backlog(OTHER, TenantId.of("x"), 1));
            assertThat(store().largestBacklogs(1)).hasSize(1);
        }

        @Test
        void theOldestRunnableAgeIsPerQueueFromWhenTheJobBecameRunnable() {
            enqueue("t");
            advanceTime(Duration.ofSeconds(30));
            enqueue("t");
            store().enqueue(NewJob.of(TenantId.of("t"), OTHER, TASK, "{}"));
            store().enqueue(job("t").withDelay(Duration.ofSeconds(10)));
            advanceTime(Duration.ofSeconds(60));
            store().promoteDue(10);

            Map<QueueName, Duration> ages = store().oldestRunnableAge();

            assertThat(ages).containsOnlyKeys(Q, OTHER);
            assertThat(ages.get(Q)).isBetween(Duration.ofSeconds(90), Duration.ofSeconds(95));
            assertThat(ages.get(OTHER)).isBetween(Duration.ofSeconds(60), Duration.ofSeconds(65));
        }
    }
}
