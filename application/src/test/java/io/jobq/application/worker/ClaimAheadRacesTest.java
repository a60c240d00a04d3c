package io.jobq.application.worker;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.jobq.application.fake.Await;
import io.jobq.application.port.ClaimRequest;
import io.jobq.application.port.NewJob;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.JobState;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.lease.WorkerId;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@link ClaimedAhead} in the races a review of it found (each failed before its fix): a job being
 * started while the claim loop adopts lost claims, a waiting job whose lease lapsed, an interrupted close.
 */
class ClaimAheadRacesTest extends WorkerFixture {
    private static final WorkerSettings ONE_SLOT = FAST.toBuilder().concurrency(1).claimBatchSize(10)
            .maintenanceEnabled(false).build();

    /** Blocks the first parse of a payload containing "gate" until {@link #open} opens. */
    static final class GatedMapper extends ObjectMapper {
        final AtomicBoolean armed = new AtomicBoolean(true);
        final CountDownLatch parsing = new CountDownLatch(1);
        final CountDownLatch open = new CountDownLatch(1);

        @Override
        public JsonNode readTree(String content) throws JsonProcessingException {
            if (content.contains("gate") && armed.compareAndSet(true, false)) {
                parsing.countDown();
                try {
                    open.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return super.readTree(content);
        }
    }

    private static boolean claimThreadIn(String frame) {
        return Thread.getAllStackTraces().entrySet().stream()
                .filter(e -> e.getKey().getName().startsWith("jobq-claim-"))
                .anyMatch(e -> Arrays.stream(e.getValue()).anyMatch(f -> f.toString().contains(frame)));
    }

    /**
     * adoptLostClaims checks runs.holds(token) and then ahead.holds(token) while a run thread may be moving
     * that very job from ClaimedAhead into RunsInHand (dispatch). Were it in neither place for a moment, the
     * claim loop would adopt it and run it a second time under the same token.
     */
    @Test
    void aJobDispatchedWhileALostClaimIsAdoptedRunsOnlyOnce() throws Exception {
        AtomicInteger gatedRuns = new AtomicInteger();
        handlers.register("count", ctx -> {
            if (ctx.payload().has("gate")) {
                gatedRuns.incrementAndGet();
                Thread.sleep(200); // a handler that takes a moment: the adoption's heartbeat sees J still running
            }
            return Optional.empty();
        });
        GatedMapper mapper = new GatedMapper();
        JobId a = enqueue("block", "{}");
        JobId j = enqueue("count", "{\"gate\":1}");
        start(io.jobq.application.worker.Worker.builder(store, handlers).listener(events).objectMapper(mapper)
                .settings(ONE_SLOT.toBuilder().prefetch(2).build()));
        Await.until(SOON, "A and J claimed, A running", () -> events.claimedJobs() == 2 && blocking.invocations.get() == 1);

        CountDownLatch leasedTo = new CountDownLatch(1);
        store.gate("runsLeasedTo", leasedTo);
        enqueue("count", "{}");
        store.loseNextAnswer("claim");
        wakeups.wakeAll();
        Await.until(SOON, "the claim loop adopting, held in runsLeasedTo", () -> claimThreadIn("awaitGate"));

        blocking.release.countDown(); // A's slot frees: its thread dispatches J, whose parse blocks
        assertThat(mapper.parsing.await(10, TimeUnit.SECONDS)).isTrue();
        leasedTo.countDown(); // runsLeasedTo answers while J is between the two: not yet in RunsInHand
        Await.until(SOON, "the claim loop past its adoption", () -> !claimThreadIn("adoptLostClaims"));
        mapper.open.countDown();

        awaitState(a, JobState.DONE);
        awaitState(j, JobState.DONE);
        Await.holdsWithin(Duration.ofMillis(500), () -> false);
        assertThat(gatedRuns.get()).as("handler runs of J, attempt 1").isEqualTo(1);
    }

    /**
     * During a store outage longer than the lease, a freed slot must not start a waiting job whose lease may
     * have lapsed: another worker may hold it by then. (Without prefetch no job ever starts after its lease lapsed.)
     */
    @Test
    void aWaitingJobWhoseLeaseLapsedIsNotStarted() {
        AtomicInteger runsHere = new AtomicInteger();
        handlers.register("count", ctx -> {
            runsHere.incrementAndGet();
            return Optional.empty();
        });
        enqueue("block", "{}");
        JobId j = enqueue("count", "{}");
        start(ONE_SLOT.toBuilder().prefetch(1).lease(Duration.ofMillis(300)).heartbeatInterval(Duration.ofMillis(50)).build());
        Await.until(SOON, "both claimed, one started", () -> events.claimedJobs() == 2 && blocking.invocations.get() == 1);

        store.setAvailable("heartbeat", false); // an outage, as the worker sees it
        Await.holdsWithin(Duration.ofMillis(600), () -> false); // twice the lease, in the worker's time
        clock.advance(Duration.ofSeconds(1)); // and in the store's
        assertThat(store.reapExpiredLeases(10, QUICK_REAP)).isEqualTo(2);
        clock.advance(Duration.ofSeconds(1));
        store.promoteDue(10);
        List<Job> other = store.claim(new ClaimRequest(List.of(QueueName.DEFAULT), WorkerId.of("w-other"), 10,
                Duration.ofSeconds(30)));
        assertThat(other).extracting(Job::id).contains(j);

        blocking.release.countDown(); // the slot frees; J waits behind it on this worker
        Await.holdsWithin(Duration.ofMillis(300), () -> false);
        assertThat(runsHere.get()).as("runs of J on the worker whose lease lapsed, while w-other holds it").isZero();
    }

    /**
     * close() on an interrupted thread (or any Throwable in the drain) still gives the waiting jobs back;
     * left to their leases, the reaper would charge them an attempt they never ran.
     */
    @Test
    void anInterruptedCloseStillGivesBackTheWaitingJobs() throws Exception {
        enqueue("block", "{}");
        JobId j = enqueue(NewJob.of(TENANT, QueueName.DEFAULT, TaskName.of("noop"), "{}").withMaxAttempts(1));
        Worker worker = start(ONE_SLOT.toBuilder().prefetch(2).build());
        Await.until(SOON, "both claimed, one started", () -> events.claimedJobs() == 2 && blocking.invocations.get() == 1);
        // a claim in flight when close() is called (room is 1: one more may wait)
        CountDownLatch claimGate = new CountDownLatch(1);
        store.gate("claim", claimGate);
        wakeups.wakeAll();
        Await.until(SOON, "a claim in flight", () -> claimThreadIn("awaitGate"));

        Thread closer = Thread.ofPlatform().unstarted(() -> {
            Thread.currentThread().interrupt();
            worker.close();
        });
        closer.start();
        closer.join(SOON);

        // Read before the claim in flight goes on: once it does, it may well claim J again, now queued.
        Job left = store.require(j);
        claimGate.countDown();
        assertThat(left.state()).as("J, never started, after an interrupted close").isEqualTo(JobState.QUEUED);
        assertThat(left.attempts()).isZero();
    }
}
