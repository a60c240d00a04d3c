package io.jobq.postgres;

import static io.jobq.postgres.StoreFixtures.LEASE;
import static io.jobq.postgres.StoreFixtures.Q;
import static io.jobq.postgres.StoreFixtures.TASK;
import static io.jobq.postgres.StoreFixtures.W1;
import static io.jobq.postgres.StoreFixtures.W2;
import static io.jobq.postgres.StoreFixtures.claim;
import static io.jobq.postgres.StoreFixtures.expireLeases;
import static io.jobq.postgres.StoreFixtures.job;
import static io.jobq.postgres.StoreFixtures.makeScheduledDue;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.jobq.application.port.EnqueueResult;
import io.jobq.application.port.FencedWrite;
import io.jobq.application.port.JobQuery;
import io.jobq.application.port.JobStore;
import io.jobq.application.port.NewJobBatch;
import io.jobq.application.port.RetryResult;
import io.jobq.application.port.StoreUnavailableException;
import io.jobq.domain.fairness.TenantWeight;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.JobState;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.StoredText;
import io.jobq.domain.lease.FencingToken;
import io.jobq.domain.retry.BackoffPolicy;
import io.jobq.domain.tenant.TenantId;
import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The PostgreSQL store's behaviour, one @Nested class per operation, on a real server. */
@ExtendWith(PostgresDatabaseExtension.class)
class PostgresJobStoreTest {

    /** Base 1 s, cap 8 s: windows small enough to check, wide enough to see jitter. */
    static final BackoffPolicy BACKOFF = new BackoffPolicy(Duration.ofSeconds(1), Duration.ofSeconds(8), new SplittableRandom(7));

    TestDatabase db;
    PostgresJobStore store;

    @BeforeEach
    void setUp(TestDatabase db) {
        this.db = db;
        db.execute("TRUNCATE jobs, tenants RESTART IDENTITY");
        store = new PostgresJobStore(db.dataSource(), PostgresJobStore.Options.DEFAULTS.withBackoff(BACKOFF));
    }

    Instant dbNow() {
        return db.dsl().resultQuery("SELECT now()").fetchSingle(0, OffsetDateTime.class).toInstant();
    }

    Job only(List<Job> jobs) {
        assertThat(jobs).hasSize(1);
        return jobs.getFirst();
    }

    @Nested
    class Enqueue {
        @Test
        void aRunnableJobIsQueuedWithTheTenantsNextStartTag() {
            Job first = store.enqueue(job("acme", "{\"text\": \"hi\"}")).job();
            Job second = store.enqueue(job("acme")).job();
            assertThat(first.state()).isEqualTo(JobState.QUEUED);
            assertThat(first.vtime().getAsDouble()).isEqualTo(1.0);
            assertThat(second.vtime().getAsDouble()).isEqualTo(2.0);
            assertThat(first.attempts()).isZero();
            assertThat(first.maxAttempts()).isEqualTo(Job.DEFAULT_MAX_ATTEMPTS);
            assertThat(first.payload()).isEqualTo("{\"text\": \"hi\"}");
            assertThat(first.lease()).isEmpty();
        }

        @Test
        void aDelayedJobIsScheduledByTheDatabaseClockWithoutChargingTheTenant() {
            Instant before = dbNow();
            Job delayed = store.enqueue(job("acme").withDelay(Duration.ofSeconds(10))).job();
            Instant after = dbNow();
            assertThat(delayed.state()).isEqualTo(JobState.SCHEDULED);
            assertThat(delayed.vtime()).isEmpty();
            // The enqueue's own now() lies between the two readings, however long the enqueue took.
            assertThat(delayed.runAt()).isBetween(before.plusSeconds(10), after.plusSeconds(10));
            double lastVtime = db.dsl().resultQuery("SELECT last_vtime FROM tenants WHERE tenant = 'acme'").fetchSingle(0, Double.class);
            assertThat(lastVtime).isZero();
        }

        @Test
        void aBatchIsOneInsertWithConsecutiveTagsInPayloadOrder() {
            List<String> payloads = IntStream.range(0, 1000).mapToObj(i -> "{\"i\": " + i + "}").toList();
            List<JobId> ids = store.enqueueBatch(new NewJobBatch(TenantId.of("bulk"), Q, TASK, payloads, 3, Duration.ZERO));
            assertThat(ids).hasSize(1000).isSorted();
            List<Double> tags = db.dsl().resultQuery("SELECT vtime FROM jobs ORDER BY id").fetch(r -> r.get(0, Double.class));
            for (int i = 0; i < tags.size(); i++) assertThat(tags.get(i)).isCloseTo(i + 1.0, within(1e-9));
            assertThat(store.get(ids.get(999)).orElseThrow().payload()).isEqualTo("{\"i\": 999}");
        }

        @Test
        void aBatchOverTheLimitIsRefusedBeforeTheDatabase() {
            List<String> payloads = Collections.nCopies(1001, "{}");
            assertThatThrownBy(() -> new NewJobBatch(TenantId.of("bulk"), Q, TASK, payloads, 3, Duration.ZERO))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("1-1000");
        }

        @Test
        void aBatchWithOneUnstorablePayloadWritesNothing() {
            List<String> payloads = IntStream.range(0, 10).mapToObj(i -> i == 5 ? "{\"bad\": \"a\\u0000b\"}" : "{}").toList();
            assertThatThrownBy(() -> store.enqueueBatch(new NewJobBatch(TenantId.of("t"), Q, TASK, payloads, 3, Duration.ZERO)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("payload");
            assertThat(db.dsl().fetchCount(io.jobq.postgres.schema.Tables.JOBS)).isZero();
        }

        @Test
        void aRepeatedIdempotencyKeyReturnsTheOriginalAndChargesNothing() {
            EnqueueResult first = store.enqueue(job("acme").withIdempotencyKey("order-42"));
            double chargedOnce = db.dsl().resultQuery("SELECT last_vtime FROM tenants WHERE tenant = 'acme'").fetchSingle(0, Double.class);
            EnqueueResult again = store.enqueue(job("acme", "{\"other\": true}").withIdempotencyKey("order-42"));
            assertThat(first).isInstanceOf(EnqueueResult.Created.class);
            assertThat(again).isInstanceOf(EnqueueResult.Existing.class);
            assertThat(again.job().id()).isEqualTo(first.job().id());
            assertThat(again.job().payload()).isEqualTo("{}");
            assertThat(db.dsl().resultQuery("SELECT last_vtime FROM tenants WHERE tenant = 'acme'").fetchSingle(0, Double.class))
                    .isEqualTo(chargedOnce);
        }

        @Test
        void idempotencyKeysAreScopedPerTenant() {
            Job a = store.enqueue(job("a").withIdempotencyKey("k")).job();
            EnqueueResult b = store.enqueue(job("b").withIdempotencyKey("k"));
            assertThat(b).isInstanceOf(EnqueueResult.Created.class);
            assertThat(b.job().id()).isNotEqualTo(a.id());
        }
    }

    @Nested
    class Claim {
        @Test
        void claimsLowestTagsFirstAndLeasesThem() {
            for (int i = 0; i < 3; i++) store.enqueue(job("a"));
            store.enqueue(job("b"));
            Instant before = dbNow();
            List<Job> claimed = store.claim(claim(W1, 2));
            // a holds tags 1, 2, 3; b arrived with V(queue) = 1 and got 1 + 1 = 2, tying a's second job,
            // which wins the tie by its lower id
            assertThat(claimed).extracting(j -> j.vtime().getAsDouble()).containsExactly(1.0, 2.0);
            assertThat(claimed).extracting(j -> j.tenant().value()).containsExactly("a", "a");
            for (Job j : claimed) {
                assertThat(j.state()).isEqualTo(JobState.RUNNING);
                assertThat(j.attempts()).isEqualTo(1);
                assertThat(j.lockedBy()).contains(W1);
                assertThat(j.startedAt()).isPresent();
                assertThat(Duration.between(before, j.lease().orElseThrow().expiry()).toSeconds()).isBetween(29L, 31L);
                assertThat(j.fencingToken()).isEqualTo(new FencingToken(j.id(), W1, 1));
            }
        }

        @Test
        void claimsOnlyTheRequestedQueuesAndNothingWhenEmpty() {
            store.enqueue(io.jobq.application.port.NewJob.of(TenantId.of("t"), QueueName.of("other"), TASK, "{}"));
            assertThat(store.claim(claim(W1, 10))).isEmpty();
            assertThat(store.claim(new io.jobq.application.port.ClaimRequest(List.of(Q, QueueName.of("other")), W1, 10, LEASE)))
                    .hasSize(1);
        }

        @Test
        void scheduledJobsAreNotClaimable() {
            store.enqueue(job("t").withDelay(Duration.ofMinutes(1)));
            assertThat(store.claim(claim(W1, 10))).isEmpty();
        }
    }

    @Nested
    class FencedWrites {
        @Test
        void completeStoresTheResultAndReleasesTheLease() {
            store.enqueue(job("t"));
            Job running = only(store.claim(claim(W1, 1)));
            FencedWrite w = store.complete(running.fencingToken(), Optional.of("{\"words\": 3}"));
            assertThat(w).isInstanceOf(FencedWrite.Applied.class);
            Job done = ((FencedWrite.Applied) w).job();
            assertThat(done.state()).isEqualTo(JobState.DONE);
            assertThat(done.result()).contains("{\"words\": 3}");
            assertThat(done.lease()).isEmpty();
            assertThat(done.finishedAt()).isPresent();
        }

        @Test
        void anotherWorkersTokenIsRejectedAndChangesNothing() {
            store.enqueue(job("t"));
            Job running = only(store.claim(claim(W1, 1)));
            FencingToken forged = new FencingToken(running.id(), W2, running.attempts());
            assertThat(store.complete(forged, Optional.empty())).isInstanceOf(FencedWrite.Rejected.class);
            assertThat(store.fail(forged, "boom", true)).isInstanceOf(FencedWrite.Rejected.class);
            assertThat(store.heartbeat(List.of(forged), LEASE)).containsExactly(forged);
            assertThat(store.get(running.id()).orElseThrow()).isEqualTo(running);
        }

        @Test
        void theSameWorkerHoldingAnOlderAttemptIsRejected() {
            store.enqueue(job("t"));
            Job first = only(store.claim(claim(W1, 1)));
            expireLeases(db);
            assertThat(store.reapExpiredLeases(10)).isEqualTo(1);
            makeScheduledDue(db);
            assertThat(store.promoteDue(10)).isEqualTo(1);
            Job second = only(store.claim(claim(W1, 1)));
            assertThat(second.attempts()).isEqualTo(2);
            assertThat(second.lockedBy()).contains(W1);

            FencedWrite stale = store.complete(first.fencingToken(), Optional.of("{\"stale\": true}"));
            assertThat(stale).isInstanceOf(FencedWrite.Rejected.class);
            assertThat(((FencedWrite.Rejected) stale).current()).contains(store.get(second.id()).orElseThrow());
            assertThat(store.heartbeat(List.of(first.fencingToken(), second.fencingToken()), LEASE))
                    .containsExactly(first.fencingToken());
            assertThat(store.complete(second.fencingToken(), Optional.empty()).applied()).isTrue();
        }

        @Test
        void aRetryableFailureIsScheduledWithinTheBackoffWindowFromNow() {
            store.enqueue(job("t"));
            db.execute("UPDATE jobs SET created_at = now() - interval '2 minutes', run_at = now() - interval '2 minutes'");
            Job running = only(store.claim(claim(W1, 1)));
            Instant before = dbNow();
            Job failed = ((FencedWrite.Applied) store.fail(running.fencingToken(), "downstream 503", false)).job();
            Instant after = dbNow();
            assertThat(failed.state()).isEqualTo(JobState.SCHEDULED);
            assertThat(failed.lastError()).contains("downstream 503");
            assertThat(failed.lease()).isEmpty();
            // attempt 1: delay in [0, min(8 s, 1 s * 2^0)] = [0, 1 s], counted from the failure
            assertThat(failed.runAt()).isBetween(before, after.plusSeconds(1));
        }

        @Test
        void aPermanentFailureIsDeadAtOnce() {
            store.enqueue(job("t"));
            Job running = only(store.claim(claim(W1, 1)));
            Job dead = ((FencedWrite.Applied) store.fail(running.fencingToken(), "bad input", true)).job();
            assertThat(dead.state()).isEqualTo(JobState.DEAD);
            assertThat(dead.attempts()).isEqualTo(1);
            assertThat(dead.finishedAt()).isPresent();
        }

        @Test
        void retryableFailuresEndDeadAfterMaxAttempts() {
            store.enqueue(job("t").withMaxAttempts(3));
            Job last = null;
            for (int attempt = 1; attempt <= 3; attempt++) {
                makeScheduledDue(db);
                store.promoteDue(10);
                Job running = only(store.claim(claim(W1, 1)));
                assertThat(running.attempts()).isEqualTo(attempt);
                last = ((FencedWrite.Applied) store.fail(running.fencingToken(), "again", false)).job();
            }
            assertThat(last.state()).isEqualTo(JobState.DEAD);
            assertThat(last.attempts()).isEqualTo(3);
        }

        @Test
        void errorsAreSanitisedAndBoundedNeverRefused() {
            store.enqueue(job("t"));
            Job running = only(store.claim(claim(W1, 1)));
            String nasty = "nul\u0000 lone\ud800 emoji\uD83D\uDE00 " + "x".repeat(100_000);
            Job failed = ((FencedWrite.Applied) store.fail(running.fencingToken(), nasty, false)).job();
            String stored = failed.lastError().orElseThrow();
            assertThat(stored).doesNotContain("\u0000").contains("\uD83D\uDE00").endsWith(StoredText.TRUNCATION_MARKER);
            assertThat(stored.getBytes(StandardCharsets.UTF_8).length).isLessThanOrEqualTo(JobStore.MAX_ERROR_BYTES);
        }

        @Test
        void aResultWithNulIsStoredSanitised() {
            store.enqueue(job("t"));
            Job running = only(store.claim(claim(W1, 1)));
            Job done = ((FencedWrite.Applied) store.complete(running.fencingToken(),
                    Optional.of("{\"s\": \"a\\u0000b\", \"k\\u0000\": \"\\\\u0000 stays text\"}"))).job();
            assertThat(done.state()).isEqualTo(JobState.DONE);
            assertThat(done.result().orElseThrow()).contains("a\uFFFDb").contains("k\uFFFD").contains("\\\\u0000 stays text");
        }
    }

    @Nested
    class Heartbeat {
        @Test
        void extendsEveryLiveLeaseInOneCallAndReportsLostOnes() {
            for (int i = 0; i < 3; i++) store.enqueue(job("t"));
            List<Job> running = store.claim(claim(W1, 3, Duration.ofSeconds(2)));
            store.complete(running.get(0).fencingToken(), Optional.empty());
            Set<FencingToken> lost = store.heartbeat(running.stream().map(Job::fencingToken).toList(), Duration.ofMinutes(5));
            assertThat(lost).containsExactly(running.get(0).fencingToken());
            Instant now = dbNow();
            for (Job j : running.subList(1, 3)) {
                Instant expiry = store.get(j.id()).orElseThrow().lease().orElseThrow().expiry();
                assertThat(Duration.between(now, expiry).toSeconds()).isBetween(290L, 301L);
            }
        }
    }

    @Nested
    class Reap {
        @Test
        void anExpiredLeaseIsReapedToScheduledNamingTheLease() {
            store.enqueue(job("t"));
            Job running = only(store.claim(claim(W1, 1)));
            assertThat(store.reapExpiredLeases(10)).as("a live lease is not reaped").isZero();
            expireLeases(db);
            assertThat(store.reapExpiredLeases(10)).isEqualTo(1);
            Job reaped = store.get(running.id()).orElseThrow();
            assertThat(reaped.state()).isEqualTo(JobState.SCHEDULED);
            assertThat(reaped.lastError().orElseThrow()).contains("lease expired").contains("w1").contains("attempt 1");
            makeScheduledDue(db);
            store.promoteDue(10);
            assertThat(only(store.claim(claim(W2, 1))).attempts()).isEqualTo(2);
        }

        @Test
        void aJobThatOutlivesEveryLeaseEndsDeadAfterMaxAttempts() {
            store.enqueue(job("t").withMaxAttempts(2));
            for (int i = 0; i < 2; i++) {
                makeScheduledDue(db);
                store.promoteDue(10);
                only(store.claim(claim(W1, 1)));
                expireLeases(db);
                assertThat(store.reapExpiredLeases(10)).isEqualTo(1);
            }
            Job dead = store.list(JobQuery.firstPage()).getFirst();
            assertThat(dead.state()).isEqualTo(JobState.DEAD);
            assertThat(dead.attempts()).isEqualTo(2);
            assertThat(dead.lastError().orElseThrow()).contains("lease expired");
        }

        @Test
        void aShortLeaseRealyLapsesByTheDatabaseClock() throws InterruptedException {
            store.enqueue(job("t"));
            only(store.claim(claim(W1, 1, Duration.ofMillis(200))));
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            int reaped = 0;
            while (reaped == 0 && System.nanoTime() < deadline) {
                Thread.sleep(50);
                reaped = store.reapExpiredLeases(10);
            }
            assertThat(reaped).isEqualTo(1);
        }
    }

    @Nested
    class Promote {
        @Test
        void dueJobsGetFreshFairTagsAndNotDueOnesStay() {
            store.enqueue(job("a"));
            store.enqueue(job("a"));
            store.enqueue(job("b").withDelay(Duration.ofSeconds(5)));
            store.enqueue(job("c").withDelay(Duration.ofHours(1)));
            db.execute("UPDATE jobs SET run_at = now() - interval '1 second' WHERE tenant = 'b'");
            assertThat(store.promoteDue(100)).isEqualTo(1);
            Job b = store.list(new JobQuery(Optional.of(TenantId.of("b")), Optional.empty(), Optional.empty(), 10, Optional.empty())).getFirst();
            assertThat(b.state()).isEqualTo(JobState.QUEUED);
            // V(queue) is a's head tag 1.0, so b starts at 1 + 1/1 = 2, level with a's backlog, not behind it
            assertThat(b.vtime().getAsDouble()).isEqualTo(2.0);
            assertThat(store.promoteDue(100)).isZero();
        }
    }

    @Nested
    class OperatorActions {
        @Test
        void retryRequeuesADeadJobWithAFreshBudgetAndANewerAttempt() {
            store.enqueue(job("t").withMaxAttempts(1));
            Job running = only(store.claim(claim(W1, 1)));
            store.fail(running.fencingToken(), "boom", false);
            RetryResult r = store.retryDead(running.id());
            assertThat(r).isInstanceOf(RetryResult.Requeued.class);
            Job requeued = ((RetryResult.Requeued) r).job();
            assertThat(requeued.state()).isEqualTo(JobState.QUEUED);
            assertThat(requeued.vtime()).isPresent();
            assertThat(requeued.maxAttempts()).isEqualTo(2);
            Job again = only(store.claim(claim(W1, 1)));
            assertThat(again.attempts()).isEqualTo(2);
            assertThat(store.complete(running.fencingToken(), Optional.empty()))
                    .as("the first run's token stays stale").isInstanceOf(FencedWrite.Rejected.class);
        }

        @Test
        void retryOfALiveJobSaysItsStateAndOfAnUnknownIdSaysNotFound() {
            Job queued = store.enqueue(job("t")).job();
            assertThat(store.retryDead(queued.id())).isEqualTo(new RetryResult.NotDead(queued));
            assertThat(store.retryDead(JobId.of(999_999))).isEqualTo(new RetryResult.NotFound(JobId.of(999_999)));
        }

        @Test
        void weightsApplyToTagsHandedOutAfterwards() {
            store.setWeight(TenantId.of("heavy"), Q, TenantWeight.of(4));
            assertThat(store.enqueue(job("heavy")).job().vtime().getAsDouble()).isEqualTo(0.25);
            assertThat(store.setWeight(TenantId.of("heavy"), Q, TenantWeight.of(2)).weight().value()).isEqualTo(2.0);
            assertThat(store.enqueue(job("heavy")).job().vtime().getAsDouble()).isEqualTo(0.75);
        }
    }

    @Nested
    class Reads {
        @Test
        void listIsNewestFirstWithKeysetPagesAndFilters() {
            for (int i = 0; i < 5; i++) store.enqueue(job(i % 2 == 0 ? "even" : "odd"));
            List<Job> page1 = store.list(new JobQuery(Optional.empty(), Optional.empty(), Optional.empty(), 2, Optional.empty()));
            assertThat(page1).extracting(j -> j.id().value()).containsExactly(5L, 4L);
            List<Job> page2 = store.list(new JobQuery(Optional.empty(), Optional.empty(), Optional.empty(), 2, Optional.of(page1.get(1).id())));
            assertThat(page2).extracting(j -> j.id().value()).containsExactly(3L, 2L);
            List<Job> even = store.list(new JobQuery(Optional.of(TenantId.of("even")), Optional.of(Q), Optional.of(JobState.QUEUED), 50, Optional.empty()));
            assertThat(even).extracting(j -> j.id().value()).containsExactly(5L, 3L, 1L);
        }

        @Test
        void statsCountByQueueAndStateAndBacklogsRankTenants() {
            for (int i = 0; i < 3; i++) store.enqueue(job("big"));
            store.enqueue(job("small"));
            store.enqueue(job("later").withDelay(Duration.ofHours(1)));
            store.claim(claim(W1, 1));
            assertThat(store.countsByQueueAndState().get(Q))
                    .containsEntry(JobState.QUEUED, 3L).containsEntry(JobState.RUNNING, 1L).containsEntry(JobState.SCHEDULED, 1L);
            assertThat(store.largestBacklogs(1)).singleElement().satisfies(b -> {
                assertThat(b.tenant().value()).isEqualTo("big");
                assertThat(b.queued()).isEqualTo(2);
            });
            db.execute("UPDATE jobs SET run_at = now() - interval '90 seconds' WHERE state = 'queued'");
            assertThat(store.oldestRunnableAge().get(Q)).isBetween(Duration.ofSeconds(89), Duration.ofSeconds(120));
        }

        @Test
        void anUnreachableDatabaseIsReportedAsUnavailable() {
            try (var pool = PostgresPool.create("jdbc:postgresql://127.0.0.1:1/nowhere?user=postgres&connectTimeout=1", 1,
                    "unreachable", Duration.ofMillis(500))) {
                PostgresJobStore dead = new PostgresJobStore(pool);
                assertThatThrownBy(dead::ping).isInstanceOf(StoreUnavailableException.class);
                assertThatThrownBy(() -> dead.enqueue(job("t"))).isInstanceOf(StoreUnavailableException.class)
                        .hasMessageContaining("enqueue");
            }
        }
    }
}
