package io.jobq.application.worker;

import static io.jobq.application.fake.Json.json;
import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.application.fake.Await;
import io.jobq.application.fake.Json;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.JobState;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@link LeaseKeeper}: heartbeats keep leases alive, a lost lease cancels the run, jeopardy is flagged in time. */
class LeaseKeeperTest extends WorkerFixture {
    /**
     * The lease is 30 s of store time. The test moves the store clock 20 s, lets heartbeats run,
     * moves it another 20 s (40 s after the claim) and reaps. With heartbeats every 50 ms the lease
     * was extended and nothing is reaped; with a 29 s heartbeat no heartbeat runs during the test,
     * and the very same steps reap the job, showing the test can fail.
     */
    @ParameterizedTest(name = "heartbeat every {0} ms: reaped = {1}")
    @CsvSource({"50, false", "29000, true"})
    void heartbeatsKeepARunningJobsLeaseAlive(long heartbeatMs, boolean expectReaped) {
        JobId id = enqueue("block", "{}");
        start(FAST.toBuilder().maintenanceEnabled(false).heartbeatInterval(Duration.ofMillis(heartbeatMs)).build());
        Await.until(SOON, "the job running", () -> blocking.invocations.get() == 1);

        clock.advance(Duration.ofSeconds(20));
        int beats = events.heartbeats.size();
        // Two more heartbeats: the second certainly started after the clock moved.
        boolean beat = Await.holdsWithin(expectReaped ? Duration.ofSeconds(2) : SOON,
                () -> events.heartbeats.size() >= beats + 2);
        assertThat(beat).as("two more heartbeats after the clock moved").isEqualTo(!expectReaped);
        clock.advance(Duration.ofSeconds(20));

        int reaped = store.reapExpiredLeases(100, QUICK_REAP);

        if (expectReaped) {
            assertThat(reaped).isEqualTo(1);
            Job job = store.require(id);
            assertThat(job.state()).isEqualTo(JobState.SCHEDULED);
            assertThat(job.lastError().orElseThrow()).contains("lease expired").contains("w-test");
        } else {
            assertThat(reaped).isZero();
            assertThat(store.require(id).state()).isEqualTo(JobState.RUNNING);
            blocking.release.countDown();
            assertThat(awaitState(id, JobState.DONE).attempts()).isEqualTo(1);
        }
    }

    @Test
    void aLostLeaseCancelsTheContextAndDiscardsTheOutcome() {
        blocking.stopWhenCancelled = true;
        JobId id = enqueue("block", "{}");
        start(FAST.toBuilder().maintenanceEnabled(false).build());
        Await.until(SOON, "the job running", () -> blocking.invocations.get() == 1);

        // Expire and reap in one step, so no heartbeat can slip in between and rescue the lease.
        int reaped = store.atomically(() -> {
            clock.advance(Duration.ofSeconds(31));
            return store.reapExpiredLeases(10, QUICK_REAP);
        });
        assertThat(reaped).isEqualTo(1);

        Await.until(SOON, "the discard", () -> !events.discards.isEmpty());
        JobContext ctx = blocking.contexts.getFirst();
        assertThat(ctx.isCancelled()).isTrue();
        assertThat(ctx.cancellationReason().orElseThrow()).contains("lease lost");
        assertThat(events.discards).containsExactly(
                new RecordingListener.Discard(ctx.token(), DiscardReason.LEASE_LOST));
        Job job = store.require(id);
        assertThat(job.state()).isEqualTo(JobState.SCHEDULED);
        assertThat(job.result()).isEmpty();
        assertThat(store.calls("complete")).isZero();
        assertThat(events.completed).isEmpty();
    }

    /**
     * Cancelling a running job reaches its handler at the worker's next heartbeat, as the flag and an
     * interrupt; the handler's interrupted wait throws, and the job ends cancelled, not retried.
     */
    @Test
    void aCancelledRunsHandlerIsToldAndInterruptedAndTheJobEndsCancelled() {
        JobId id = enqueue("block", "{}");
        start(FAST.toBuilder().maintenanceEnabled(false).build());
        Await.until(SOON, "the job running", () -> blocking.invocations.get() == 1);

        assertThat(store.cancel(id)).isInstanceOf(io.jobq.application.port.CancelResult.Requested.class);

        Job job = awaitState(id, JobState.CANCELLED);
        JobContext ctx = blocking.contexts.getFirst();
        assertThat(ctx.isCancelled()).isTrue();
        assertThat(ctx.cancellationReason().orElseThrow()).contains("was cancelled while it ran");
        assertThat(job.attempts()).as("never retried").isEqualTo(1);
        assertThat(job.finishedAt()).isPresent();
        assertThat(job.lastError().orElseThrow()).as("why first, then how the handler ended")
                .startsWith("cancelled: job " + id + " was cancelled while it ran").contains("Interrupted");
    }

    /** A handler that ignores the flag and the interrupt finishes its work: the job is done, its result kept. */
    @Test
    void aHandlerThatIgnoresCancellingFinishesAndItsResultIsKept() {
        JobId id = enqueue("stubborn", "{}");
        start(FAST.toBuilder().maintenanceEnabled(false).build());
        Await.until(SOON, "the job running", () -> stubborn.thread.get() != null);

        store.cancel(id);
        Await.until(SOON, "the interrupt, ignored", () -> stubborn.interruptsIgnored.get() >= 1);
        stubborn.letGo.countDown();

        Job job = awaitState(id, JobState.DONE);
        assertThat(job.result().orElseThrow()).contains("late");
        assertThat(job.cancelRequested()).isTrue();
    }

    /**
     * A store outage longer than the lease: no heartbeat gets through, so once the store is back any
     * worker may reap the lease and run the job again. The worker flags the run's lease as in jeopardy
     * and says why, without cancelling it; the outcome is still offered, and here the store (whose
     * clock did not move, so nothing was reaped) takes it.
     */
    @Test
    void aStoreOutageLongerThanTheLeaseFlagsTheLeaseAsInJeopardy() {
        JobId id = enqueue("block", "{}");
        start(FAST.toBuilder().maintenanceEnabled(false).lease(Duration.ofSeconds(1)).heartbeatInterval(Duration.ofMillis(100)).build());
        Await.until(SOON, "the job running", () -> blocking.invocations.get() == 1);
        Await.until(SOON, "a heartbeat applied", () -> !events.heartbeats.isEmpty());

        store.setAvailable(false);
        JobContext ctx = blocking.contexts.getFirst();
        Await.until(SOON, "the lease flagged during the outage", ctx::isLeaseInJeopardy);
        assertThat(ctx.leaseJeopardyReason().orElseThrow()).contains("lease in jeopardy").contains("1000 ms");
        assertThat(ctx.isCancelled()).as("not a cancellation").isFalse();
        store.setAvailable(true);
        blocking.release.countDown();

        Job done = awaitState(id, JobState.DONE);
        assertThat(done.result().map(Json::json)).as("not interrupted: the handler's own result")
                .contains(json("{\"released\": true}"));
        assertThat(events.discards).isEmpty();
    }

    /**
     * A heartbeat that hangs (a dropped connection waits for its socket timeout) rather than fails:
     * the worker's timer notices the lapsed deadline without waiting for the call to return.
     */
    @Test
    void aHeartbeatThatHangsLongerThanTheLeaseFlagsTheLeaseToo() throws InterruptedException {
        JobId id = enqueue("block", "{}");
        start(FAST.toBuilder().maintenanceEnabled(false).lease(Duration.ofSeconds(1)).heartbeatInterval(Duration.ofMillis(100)).build());
        Await.until(SOON, "the job running", () -> blocking.invocations.get() == 1);
        Await.until(SOON, "a heartbeat applied", () -> !events.heartbeats.isEmpty());
        JobContext ctx = blocking.contexts.getFirst();

        // Every store call waits while this holds the store's lock: the next heartbeat hangs, it does not fail.
        Thread holder = Thread.ofPlatform().start(() -> store.atomically(() ->
                Await.holdsWithin(SOON, ctx::isLeaseInJeopardy)));
        holder.join(SOON.toMillis() + 5_000);

        // The store stayed available throughout, so no heartbeat failed: only the timer could flag it.
        assertThat(ctx.isLeaseInJeopardy()).as("flagged while the heartbeat hung").isTrue();
        assertThat(events.storeErrors("heartbeat")).isZero();
        blocking.release.countDown();
        awaitState(id, JobState.DONE);
    }

    /** The control: the same outage, shorter than the lease by seconds, flags nothing. */
    @Test
    void aStoreOutageShorterThanTheLeaseFlagsNothing() {
        JobId id = enqueue("block", "{}");
        start(FAST.toBuilder().maintenanceEnabled(false).lease(Duration.ofSeconds(5)).heartbeatInterval(Duration.ofMillis(100)).build());
        Await.until(SOON, "the job running", () -> blocking.invocations.get() == 1);
        Await.until(SOON, "a heartbeat applied", () -> !events.heartbeats.isEmpty());

        store.setAvailable(false);
        JobContext ctx = blocking.contexts.getFirst();
        assertThat(Await.holdsWithin(Duration.ofMillis(500), ctx::isLeaseInJeopardy)).as("flagged during a 0.5 s outage").isFalse();
        store.setAvailable(true);
        blocking.release.countDown();

        awaitState(id, JobState.DONE);
        assertThat(ctx.isLeaseInJeopardy()).isFalse();
    }
}
