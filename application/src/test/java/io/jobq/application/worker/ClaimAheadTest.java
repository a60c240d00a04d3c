package io.jobq.application.worker;

import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.application.fake.Await;
import io.jobq.application.port.ClaimRequest;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.JobState;
import io.jobq.domain.job.QueueName;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@link WorkerSettings#prefetch()}: a worker claiming beyond its free slots ({@link ClaimedAhead}). Its
 * claims are fuller, it still runs no more handlers than it has slots, the jobs waiting for a slot keep
 * their leases, and shutdown gives them back unrun.
 */
class ClaimAheadTest extends WorkerFixture {
    /** The worker settings these tests vary: one slot, batches of 10, maintenance by the test. */
    private static final WorkerSettings ONE_SLOT = FAST.toBuilder().concurrency(1).claimBatchSize(10)
            .maintenanceEnabled(false).build();

    @Test
    void aOneSlotWorkerClaimsFullBatchesAndStillRunsOneHandlerAtATime() {
        Overlap overlap = new Overlap();
        handlers.register("probe", overlap);
        List<JobId> ids = enqueueProbes(30);

        start(ONE_SLOT.toBuilder().prefetch(20).build());
        ids.forEach(id -> awaitState(id, JobState.DONE));

        assertThat(events.claims.getFirst()).as("the first claim, of an idle worker with room for 21").hasSize(10);
        assertThat(events.claims.size()).as("claims for 30 jobs").isLessThanOrEqualTo(10);
        assertThat(overlap.most.get()).as("handlers running at once on one slot").isEqualTo(1);
        assertThat(ids).allSatisfy(id -> assertThat(store.require(id).attempts()).isEqualTo(1));
    }

    /** The same scenario without prefetch: one job per claim, so the assertions above can fail. */
    @Test
    void withoutPrefetchTheSameWorkerClaimsOneJobAtATime() {
        Overlap overlap = new Overlap();
        handlers.register("probe", overlap);
        List<JobId> ids = enqueueProbes(30);

        start(ONE_SLOT);
        ids.forEach(id -> awaitState(id, JobState.DONE));

        assertThat(events.claims).hasSize(30).allSatisfy(claim -> assertThat(claim).hasSize(1));
    }

    @Test
    void jobsWaitingForASlotAreHeartbeatedSoTheirLeasesOutliveTheClaim() {
        List<JobId> ids = List.of(enqueue("block", "{}"), enqueue("block", "{}"), enqueue("block", "{}"));
        start(ONE_SLOT.toBuilder().prefetch(2).build());
        Await.until(SOON, "three jobs claimed, one started", () -> events.claimedJobs() == 3 && blocking.invocations.get() == 1);

        // The claim leased them for 30 s by the store's clock; only heartbeats keep them past that.
        clock.advance(Duration.ofSeconds(20));
        int beats = events.heartbeats.size();
        Await.until(SOON, "a heartbeat extending all three", () -> events.heartbeats.stream().skip(beats)
                .anyMatch(b -> b.extended() == 3));
        clock.advance(Duration.ofSeconds(20));

        assertThat(store.reapExpiredLeases(10, QUICK_REAP)).as("leases reaped 40 s after the claim").isZero();
        blocking.release.countDown();
        ids.forEach(id -> assertThat(awaitState(id, JobState.DONE).attempts()).isEqualTo(1));
        assertThat(blocking.invocations.get()).isEqualTo(3);
    }

    @Test
    void shutdownGivesTheWaitingJobsBackUnrunForAnyWorkerToClaim() throws Exception {
        List<JobId> ids = new ArrayList<>();
        for (int i = 0; i < 6; i++) ids.add(enqueue("block", "{}"));
        Worker worker = start(ONE_SLOT.toBuilder().prefetch(5).build());
        Await.until(SOON, "six jobs claimed, one started", () -> events.claimedJobs() == 6 && blocking.invocations.get() == 1);

        Thread closer = Thread.ofPlatform().start(worker::close);
        List<JobId> waiting = ids.subList(1, 6);
        // given back at once, while the running job still has its grace period
        waiting.forEach(id -> awaitState(id, JobState.QUEUED));
        blocking.release.countDown();
        closer.join(SOON);

        assertThat(closer.isAlive()).isFalse();
        assertThat(store.require(ids.getFirst()).state()).isEqualTo(JobState.DONE);
        assertThat(blocking.invocations.get()).as("handlers run").isEqualTo(1);
        assertThat(waiting).allSatisfy(id -> assertThat(store.require(id).attempts()).isZero());
        List<Job> next = store.claim(new ClaimRequest(List.of(QueueName.DEFAULT), WORKER, 10, Duration.ofSeconds(30)));
        assertThat(next).extracting(Job::id).containsExactlyElementsOf(waiting);
        assertThat(next).allSatisfy(job -> assertThat(job.attempts()).isEqualTo(1));
    }

    @Test
    void aJobCancelledWhileItWaitsForASlotNeverStarts() {
        JobId first = enqueue("block", "{}");
        JobId second = enqueue("block", "{}");
        start(ONE_SLOT.toBuilder().prefetch(1).build());
        Await.until(SOON, "both claimed, one started", () -> events.claimedJobs() == 2 && blocking.invocations.get() == 1);

        store.cancel(second);
        awaitState(second, JobState.CANCELLED);
        blocking.release.countDown();

        awaitState(first, JobState.DONE);
        Await.holdsWithin(Duration.ofMillis(200), () -> false); // time for a wrongly started run to show
        assertThat(blocking.invocations.get()).isEqualTo(1);
    }

    private List<JobId> enqueueProbes(int n) {
        List<JobId> ids = new ArrayList<>();
        for (int i = 0; i < n; i++) ids.add(enqueue("probe", "{}"));
        return ids;
    }

    /** Records the most handlers that ran at once; each run takes about a millisecond. */
    private static final class Overlap implements JobHandler {
        final AtomicInteger now = new AtomicInteger();
        final AtomicInteger most = new AtomicInteger();

        @Override
        public Optional<com.fasterxml.jackson.databind.JsonNode> handle(JobContext ctx) throws InterruptedException {
            most.accumulateAndGet(now.incrementAndGet(), Math::max);
            Thread.sleep(1);
            now.decrementAndGet();
            return Optional.empty();
        }
    }
}
