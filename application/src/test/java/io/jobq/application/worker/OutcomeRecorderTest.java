package io.jobq.application.worker;

import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.application.fake.Await;
import io.jobq.application.port.OutcomeWrite;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.JobState;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.lease.FencingToken;
import io.jobq.domain.lease.WorkerId;
import io.jobq.domain.retry.RetryDecision;
import io.jobq.domain.tenant.TenantId;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.OptionalDouble;
import org.junit.jupiter.api.Test;

/** {@link OutcomeRecorder}: outcomes are written fenced, retried when the store fails, discarded when refused. */
class OutcomeRecorderTest extends WorkerFixture {
    @Test
    void aCompletionRejectedBecauseTheJobMovedOnIsDiscardedNotReportedDone() {
        // The stale-worker case (R02): reaped and re-claimed by another worker before the handler
        // returns, and no heartbeat ran in between to notice.
        JobId id = enqueue("block", "{}");
        start(FAST.toBuilder().maintenanceEnabled(false).heartbeatInterval(Duration.ofSeconds(29)).build());
        Await.until(SOON, "the job running", () -> blocking.invocations.get() == 1);
        store.atomically(() -> {
            clock.advance(Duration.ofSeconds(31));
            store.reapExpiredLeases(10, QUICK_REAP);
            clock.advance(Duration.ofSeconds(1));
            store.promoteDue(10);
            return store.claim(new io.jobq.application.port.ClaimRequest(
                    List.of(QueueName.DEFAULT), WorkerId.of("w-other"), 1, Duration.ofSeconds(30)));
        });

        blocking.release.countDown();
        Await.until(SOON, "the discard", () -> !events.discards.isEmpty());

        assertThat(events.discards).extracting(RecordingListener.Discard::reason)
                .containsExactly(DiscardReason.WRITE_REJECTED);
        Job job = store.require(id);
        assertThat(job.state()).isEqualTo(JobState.RUNNING);
        assertThat(job.lockedBy()).hasValue(WorkerId.of("w-other"));
        assertThat(job.attempts()).isEqualTo(2);
        assertThat(events.completed).isEmpty();
    }

    @Test
    void aCompletionThatFailsOnceIsRetriedAndRecorded() {
        handlers.register("flaky_store", ctx -> {
            store.setAvailable(false); // the store goes down just as the handler finishes
            return Optional.empty();
        });
        events.onStoreError = e -> {
            if (e.operation().equals("complete")) store.setAvailable(true);
        };
        JobId id = enqueue("flaky_store", "{}");
        start(FAST);

        awaitState(id, JobState.DONE);
        assertThat(events.storeErrors("complete")).isEqualTo(1);
    }

    @Test
    void aCompletionThatKeepsFailingIsLeftToTheLeaseNeverReportedDone() {
        handlers.register("doomed", ctx -> {
            store.setAvailable(false);
            return Optional.empty();
        });
        JobId id = enqueue("doomed", "{}");
        start(FAST.toBuilder().maintenanceEnabled(false).build());

        Await.until(SOON, "the discard", () -> !events.discards.isEmpty());
        store.setAvailable(true);

        assertThat(events.storeErrors("complete")).isEqualTo(Worker.WRITE_ATTEMPTS);
        assertThat(events.discards).extracting(RecordingListener.Discard::reason)
                .containsExactly(DiscardReason.WRITE_FAILED);
        assertThat(events.completed).isEmpty();
        assertThat(store.require(id).state()).isEqualTo(JobState.RUNNING);
    }

    /**
     * A write held by another transaction (an application's open cancel) is made again, not discarded, and
     * lands once the row is let go; meanwhile the job is neither done nor given up.
     */
    @Test
    void aHeldCompletionIsWrittenAgainOnceTheRowIsLetGo() throws InterruptedException {
        JobId[] id = new JobId[1];
        handlers.register("held", ctx -> {
            store.holdRow(id[0], true);
            return Optional.empty();
        });
        id[0] = enqueue("held", "{}");
        start(FAST);
        Await.until(SOON, "the completion answered held", () -> store.calls("recordOutcomesThenClaim") + store.calls("recordOutcomes") >= 3);
        assertThat(store.require(id[0]).state()).isEqualTo(JobState.RUNNING);
        store.holdRow(id[0], false);

        awaitState(id[0], JobState.DONE);
        Await.until(SOON, "the completion reported", () -> events.completed.size() == 1); // after the store's commit
        assertThat(events.discards).isEmpty();
    }

    /** A row held for a whole lease: the write is left to the lease (the holder may be a reaper), the run let go. */
    @Test
    void aCompletionHeldForAWholeLeaseIsLeftToTheLease() {
        JobId[] id = new JobId[1];
        handlers.register("held", ctx -> {
            store.holdRow(id[0], true);
            return Optional.empty();
        });
        id[0] = enqueue("held", "{}");
        start(FAST.toBuilder().lease(Duration.ofMillis(300)).maintenanceEnabled(false).build());

        Await.until(SOON, "the discard", () -> !events.discards.isEmpty());
        assertThat(events.discards).extracting(RecordingListener.Discard::reason).containsExactly(DiscardReason.WRITE_FAILED);
        assertThat(events.completed).isEmpty();
        assertThat(store.require(id[0]).state()).isEqualTo(JobState.RUNNING);
    }

    /**
     * A write tried again after its answer was lost is refused (its fence is gone): it counts as written only
     * when the row is exactly as this write left it, never when someone else moved the job on.
     */
    @Test
    void aRefusedRetryCountsAsWrittenOnlyWhenTheRowShowsThisVeryWrite() {
        FencingToken token = new FencingToken(JobId.of(7), WorkerId.of("w"), 2);
        OutcomeWrite complete = new OutcomeWrite.Complete(token, Optional.empty());
        OutcomeWrite fail = new OutcomeWrite.Fail(token, "boom", new RetryDecision.RetryAfter(Duration.ofSeconds(1)), Optional.empty());

        assertThat(OutcomeRecorder.showsThisWrite(row(JobState.DONE, 2, null), complete)).isTrue();
        assertThat(OutcomeRecorder.showsThisWrite(row(JobState.DONE, 3, null), complete)).as("done by a later attempt").isFalse();
        assertThat(OutcomeRecorder.showsThisWrite(row(JobState.SCHEDULED, 2, "boom"), fail)).isTrue();
        assertThat(OutcomeRecorder.showsThisWrite(row(JobState.DEAD, 2, "boom"), fail)).as("dead after this write").isTrue();
        assertThat(OutcomeRecorder.showsThisWrite(row(JobState.SCHEDULED, 2, "lease expired: worker w did not finish"), fail))
                .as("reaped: the reaper's text").isFalse();
        assertThat(OutcomeRecorder.showsThisWrite(row(JobState.SCHEDULED, 3, "boom"), fail)).as("another attempt").isFalse();
        assertThat(OutcomeRecorder.showsThisWrite(row(JobState.SCHEDULED, 2, "boom"), complete)).as("a complete").isFalse();
    }

    private static Job row(JobState state, int attempts, String lastError) {
        Instant t = Instant.parse("2026-12-02T10:00:00Z");
        return new Job(JobId.of(7), TenantId.of("t"), QueueName.DEFAULT, TaskName.of("noop"), "{}", Optional.empty(), state,
                OptionalDouble.empty(), t, attempts, 5, Optional.empty(), Optional.ofNullable(lastError), Optional.empty(), t,
                Optional.of(t), state == JobState.SCHEDULED ? Optional.empty() : Optional.of(t), false, 0);
    }
}
