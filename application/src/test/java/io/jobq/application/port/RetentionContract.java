package io.jobq.application.port;

import static io.jobq.application.port.JobStoreContract.DEAD;
import static io.jobq.application.port.JobStoreContract.LEASE;
import static io.jobq.application.port.JobStoreContract.OTHER;
import static io.jobq.application.port.JobStoreContract.Q;
import static io.jobq.application.port.JobStoreContract.TASK;
import static io.jobq.application.port.JobStoreContract.W1;
import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.tenant.TenantId;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Retention of finished jobs ({@link JobStore#deleteFinished}, {@link Retention}) as every store must keep
 * it. {@link JobStoreContract} runs these against every store (its nested {@code Retain}).
 */
public abstract class RetentionContract {
    static final TenantId T = TenantId.of("acme");

    /** The store under test, empty at the start of each test. */
    protected abstract JobStore store();

    /** Makes {@code by} pass for the store (see {@link JobStoreContract#advanceTime}). */
    protected abstract void advanceTime(Duration by);

    JobId finish(QueueName queue, String how, Optional<String> key) {
        store().enqueue(new NewJob(T, queue, TASK, "{}", 5, Duration.ZERO, key));
        Job run = store().claim(new ClaimRequest(List.of(queue), W1, 1, LEASE)).getFirst();
        switch (how) {
            case "done" -> store().complete(run.fencingToken(), Optional.empty());
            case "dead" -> store().fail(run.fencingToken(), "no", DEAD);
            default -> {
                store().cancel(run.id());
                store().fail(run.fencingToken(), "stopped", DEAD);
            }
        }
        return run.id();
    }

    boolean exists(JobId id) {
        return store().get(id).isPresent();
    }

    @Test
    void byDefaultDoneAndCancelledJobsGoAfter7DaysAndDeadOnesAfter30() {
        JobId done = finish(Q, "done", Optional.empty());
        JobId dead = finish(Q, "dead", Optional.empty());
        JobId cancelled = finish(Q, "cancelled", Optional.empty());
        advanceTime(Duration.ofDays(6));
        assertThat(store().deleteFinished(100)).isZero();
        advanceTime(Duration.ofDays(2));
        assertThat(store().deleteFinished(100)).isEqualTo(2);
        assertThat(exists(done)).isFalse();
        assertThat(exists(cancelled)).isFalse();
        assertThat(exists(dead)).isTrue();
        advanceTime(Duration.ofDays(23));
        assertThat(store().deleteFinished(100)).isEqualTo(1);
        assertThat(exists(dead)).isFalse();
    }

    @Test
    void aQueuesOwnRetentionAppliesAndZeroKeepsForEver() {
        store().configureQueue(QueueUpdate.retention(Q, new Retention(Duration.ofSeconds(1), Duration.ZERO, Duration.ofSeconds(1))));
        QueueSettings other = store().configureQueue(new QueueUpdate(OTHER, Optional.empty(), Optional.of(Duration.ZERO),
                Optional.empty(), Optional.empty()));
        assertThat(other.retention()).as("what is left out keeps its default")
                .isEqualTo(new Retention(Duration.ZERO, Retention.DEFAULT.dead(), Retention.DEFAULT.cancelled()));
        JobId done = finish(Q, "done", Optional.empty());
        JobId dead = finish(Q, "dead", Optional.empty());
        JobId kept = finish(OTHER, "done", Optional.empty());
        advanceTime(Duration.ofDays(365 * 5));
        assertThat(store().deleteFinished(100)).isEqualTo(1);
        assertThat(exists(done)).isFalse();
        assertThat(exists(dead)).as("dead kept for ever in Q").isTrue();
        assertThat(exists(kept)).as("done kept for ever in OTHER").isTrue();
    }

    @Test
    void eachCallDeletesAtMostTheLimitPerQueueAndStateOldestFirstAndUnfinishedJobsStay() {
        JobId first = finish(Q, "done", Optional.empty());
        advanceTime(Duration.ofSeconds(1));
        for (int i = 0; i < 4; i++) finish(Q, "done", Optional.empty());
        JobId waiting = store().enqueue(NewJob.of(T, Q, TASK, "{}")).job().id();
        advanceTime(Duration.ofDays(8));
        assertThat(store().deleteFinished(2)).isEqualTo(2);
        assertThat(exists(first)).as("the oldest first").isFalse();
        assertThat(store().deleteFinished(2)).isEqualTo(2);
        assertThat(store().deleteFinished(2)).isEqualTo(1);
        assertThat(store().deleteFinished(2)).isZero();
        assertThat(exists(waiting)).as("a queued job is never deleted").isTrue();
    }

    @Test
    void aDeletedJobsIdempotencyKeyCanBeUsedAgain() {
        JobId old = finish(Q, "done", Optional.of("order-1"));
        advanceTime(Duration.ofDays(8));
        store().deleteFinished(100);
        EnqueueResult again = store().enqueue(new NewJob(T, Q, TASK, "{}", 5, Duration.ZERO, Optional.of("order-1")));
        assertThat(again).isInstanceOf(EnqueueResult.Created.class);
        assertThat(again.job().id()).isNotEqualTo(old);
    }
}
