package io.jobq.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.application.fake.Await;
import io.jobq.application.port.ClaimRequest;
import io.jobq.application.port.ExpiredLeaseDecider;
import io.jobq.application.port.FencedWrite;
import io.jobq.application.port.NewJob;
import io.jobq.application.port.NewJobBatch;
import io.jobq.application.worker.HandlerRegistry;
import io.jobq.application.worker.Worker;
import io.jobq.application.worker.WorkerListener;
import io.jobq.application.worker.WorkerSettings;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.JobState;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.lease.WorkerId;
import io.jobq.domain.retry.BackoffPolicy;
import io.jobq.domain.retry.FailureKind;
import io.jobq.domain.retry.RetryDecision;
import io.jobq.domain.retry.RetryPolicy;
import io.jobq.domain.tenant.TenantId;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/**
 * Robustness case R07: backoff that really backs off: counted from the failure by the database clock, bounded for any
 * attempt count, and jittered so jobs failing together do not retry together. The delays are the
 * worker's {@link RetryPolicy}'s (defaults: base 1 s, cap 10 min); the store writes them from its now().
 */
class BackoffReallyBacksOffTest extends PostgresStoreTestCase {
    static final TenantId T = TenantId.of("t1");
    static final WorkerId W = WorkerId.of("w1");
    static final Duration CAP = BackoffPolicy.DEFAULT_CAP; // 10 min

    static final RetryPolicy POLICY = RetryPolicy.defaults();

    private Instant dbNow() {
        return db.dsl().resultQuery("SELECT clock_timestamp()").fetchSingle(0, OffsetDateTime.class).toInstant();
    }

    private Job claimOne() {
        List<Job> claimed = store.claim(new ClaimRequest(List.of(QueueName.DEFAULT), W, 1, Duration.ofSeconds(30)));
        assertThat(claimed).hasSize(1);
        return claimed.getFirst();
    }

    private Job applied(FencedWrite w) {
        assertThat(w).isInstanceOf(FencedWrite.Applied.class);
        return ((FencedWrite.Applied) w).job();
    }

    /** (a) A job queued for 2 minutes: its retry is counted from the failure, not from run_at or created_at. */
    @Test
    void aJobThatWaitedTwoMinutesRetriesWithinOneBackoffOfItsFailure() {
        JobId id = store.enqueue(NewJob.of(T, QueueName.DEFAULT, TaskName.of("fail"), "{}")).job().id();
        db.execute("UPDATE jobs SET created_at = now() - interval '2 minutes', run_at = now() - interval '2 minutes' WHERE id = {0}",
                id.value());
        Job running = claimOne();
        Duration delay = retryDelay(POLICY.decide(running.attempts(), running.maxAttempts(), FailureKind.ERROR));
        assertThat(delay).isLessThanOrEqualTo(POLICY.backoff().ceiling(1)).isLessThanOrEqualTo(Duration.ofSeconds(1));
        Instant before = dbNow();
        Job failed = applied(store.fail(running.fencingToken(), "boom", new RetryDecision.RetryAfter(delay)));
        Instant after = dbNow();
        assertThat(failed.state()).isEqualTo(JobState.SCHEDULED);
        assertThat(failed.runAt()).as("run_at vs the failure by the database clock")
                .isAfterOrEqualTo(before.plus(delay)).isBeforeOrEqualTo(after.plus(delay));
        // The same for a reaped run (the other retry path): counted from the reap.
        promoteNowAndClaim(id);
        db.execute("UPDATE jobs SET locked_until = now() - interval '2 minutes', started_at = now() - interval '2 minutes' WHERE id = {0}",
                id.value());
        List<Duration> reapDelays = new ArrayList<>();
        Instant beforeReap = dbNow();
        assertThat(store.reapExpiredLeases(10, (attempt, max) -> {
            RetryDecision d = ExpiredLeaseDecider.by(POLICY).decide(attempt, max);
            reapDelays.add(retryDelay(d));
            return d;
        })).isEqualTo(1);
        Instant afterReap = dbNow();
        Job reaped = store.get(id).orElseThrow();
        assertThat(reaped.state()).isEqualTo(JobState.SCHEDULED);
        assertThat(reapDelays).hasSize(1).allSatisfy(d -> assertThat(d).isLessThanOrEqualTo(POLICY.backoff().ceiling(2)));
        assertThat(reaped.runAt()).isAfterOrEqualTo(beforeReap.plus(reapDelays.getFirst()))
                .isBeforeOrEqualTo(afterReap.plus(reapDelays.getFirst()));
    }

    private static Duration retryDelay(RetryDecision decision) {
        assertThat(decision).isInstanceOf(RetryDecision.RetryAfter.class);
        return ((RetryDecision.RetryAfter) decision).delay();
    }

    private void promoteNowAndClaim(JobId id) {
        db.execute("UPDATE jobs SET run_at = now() WHERE id = {0}", id.value());
        assertThat(store.promoteDue(10)).isEqualTo(1);
        assertThat(claimOne().id()).isEqualTo(id);
    }

    /** (b) attempts forced to 70: one more failure (or reap) is scheduled at most cap + 1 s ahead; no interval overflow. */
    @Test
    void seventyAttemptsBackOffNoLongerThanTheCap() {
        JobId id = store.enqueue(NewJob.of(T, QueueName.DEFAULT, TaskName.of("fail"), "{}").withMaxAttempts(100)).job().id();
        db.execute("UPDATE jobs SET attempts = 70 WHERE id = {0}", id.value());
        Job running = claimOne();
        assertThat(running.attempts()).isEqualTo(71);
        RetryDecision decision = POLICY.decide(running.attempts(), running.maxAttempts(), FailureKind.ERROR);
        Job failed = applied(store.fail(running.fencingToken(), "boom", decision));
        assertThat(failed.state()).isEqualTo(JobState.SCHEDULED);
        assertThat(failed.runAt()).isBeforeOrEqualTo(dbNow().plus(CAP).plusSeconds(1)).isAfterOrEqualTo(failed.finishedAt().orElse(Instant.MIN));

        promoteNowAndClaim(id);
        db.execute("UPDATE jobs SET locked_until = now() - interval '1 second' WHERE id = {0}", id.value());
        assertThat(store.reapExpiredLeases(10, ExpiredLeaseDecider.by(POLICY))).isEqualTo(1);
        Job reaped = store.get(id).orElseThrow();
        assertThat(reaped.attempts()).isEqualTo(72);
        assertThat(reaped.state()).isEqualTo(JobState.SCHEDULED);
        assertThat(reaped.runAt()).isBeforeOrEqualTo(dbNow().plus(CAP).plusSeconds(1));
    }

    /**
     * (c) 100 jobs failing their first attempt together (base 2 s): >= 90 distinct run_at values spread over
     * >= 1 s, and all end done with attempts = 2.
     */
    @Test
    void aHundredJobsFailingTogetherDoNotRetryTogether() {
        Map<JobId, Instant> retryAt = new ConcurrentHashMap<>();
        WorkerSettings settings = WorkerSettings.builder().concurrency(100).claimBatchSize(100)
                .lease(Duration.ofSeconds(10)).maintenanceInterval(Duration.ofMillis(250)).listen(false)
                .pollInterval(Duration.ofMillis(200)).build();
        try (Worker worker = Worker.builder(store, HandlerRegistry.withBuiltIns()).settings(settings)
                .retryPolicy(new RetryPolicy(BackoffPolicy.of(Duration.ofSeconds(2), CAP)))
                .listener(new WorkerListener() {
                    @Override
                    public void failed(Job claimed, String error, Job recorded) {
                        if (claimed.attempts() == 1) retryAt.put(recorded.id(), recorded.runAt());
                    }
                }).build()) {
            // One INSERT, so all 100 are claimed by one claim and fail at the same moment.
            List<JobId> ids = store.enqueueBatch(new NewJobBatch(T, QueueName.DEFAULT, TaskName.of("fail"),
                    Collections.nCopies(100, "{\"times\": 1}"), 5, Duration.ZERO));
            worker.start();
            Await.until(Duration.ofSeconds(30), "100 first failures recorded", () -> retryAt.size() == 100);
            List<Instant> times = retryAt.values().stream().sorted().toList();
            long distinct = times.stream().distinct().count();
            Duration spread = Duration.between(times.getFirst(), times.getLast());
            System.out.printf("R07c: %d distinct run_at values over %d ms%n", distinct, spread.toMillis());
            assertThat(distinct).as("distinct run_at values").isGreaterThanOrEqualTo(90);
            assertThat(spread).as("spread of run_at").isGreaterThanOrEqualTo(Duration.ofSeconds(1));

            Await.until(Duration.ofSeconds(30), "all 100 done", () -> db.dsl()
                    .resultQuery("SELECT count(*) FROM jobs WHERE state = 'done' AND attempts = 2").fetchSingle(0, Long.class) == 100);
            assertThat(db.dsl().resultQuery("SELECT count(*) FROM jobs").fetchSingle(0, Long.class)).isEqualTo(ids.size());
        }
    }
}
