package io.jobq.application.worker;

import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.application.fake.Await;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.JobState;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@link OutcomeWriter}: with a store whose claims cannot carry outcomes (PostgreSQL under {@code FOR UPDATE},
 * whose claim may wait on locks), the outcomes are written beside the claims, never inside one, by one thread
 * of the worker, which writes every outcome waiting in one call, and which ends with the worker.
 */
class OutcomeWriterTest extends WorkerFixture {

    @Test
    void outcomesAreWrittenBesideTheClaimsByTheWorkersWriterThread() {
        store.setClaimsCarryOutcomes(false);
        List<JobId> ids = new ArrayList<>();
        for (int i = 0; i < 5; i++) ids.add(enqueue("noop", "{}"));
        Worker worker = start(FAST.toBuilder().concurrency(1).claimBatchSize(1).maintenanceEnabled(false).build());
        String writer = "jobq-outcomes-" + worker.id();
        assertThat(threadNamed(writer)).as("the writer thread runs").isTrue();
        for (JobId id : ids) awaitState(id, JobState.DONE);

        Await.until(SOON, "every outcome written", () -> store.calls("complete") == 5);
        assertThat(store.calls("recordOutcomes")).as("calls writing them, one or more outcomes each").isBetween(1, 5);
        assertThat(store.calls("recordOutcomesThenClaim")).isZero();
        worker.close();
        assertThat(threadNamed(writer)).as("the writer thread ends with the worker").isFalse();
    }

    /**
     * The first outcome's write is held at the store; three more runs end meanwhile. Their outcomes wait and
     * go in the writer's next call, one for the three: two calls in all, where runs writing their own
     * outcomes make four.
     */
    @Test
    void oneWriteCarriesEveryOutcomeWaiting() throws InterruptedException {
        store.setClaimsCarryOutcomes(false);
        Semaphore steps = new Semaphore(0);
        AtomicInteger returned = new AtomicInteger();
        handlers.register("step", ctx -> {
            steps.acquire();
            returned.incrementAndGet();
            return Optional.empty();
        });
        List<JobId> ids = new ArrayList<>();
        for (int i = 0; i < 4; i++) ids.add(enqueue("step", "{}"));
        CountDownLatch gate = new CountDownLatch(1);
        store.gate("recordOutcomes", gate);
        // The longest fill wait keeps the batcher's watchdog (twice it, plus 100 ms) from handing the waiting
        // outcomes back to their runs while the gate holds the first write.
        start(FAST.toBuilder().concurrency(4).claimBatchSize(4).batchFillWait(WorkerSettings.MAX_BATCH_FILL_WAIT)
                .maintenanceEnabled(false).build());
        Await.until(SOON, "4 jobs claimed", () -> events.claimedJobs() == 4);

        steps.release(1);
        Await.until(SOON, "the first handler returned", () -> returned.get() == 1);
        Thread.sleep(200); // its outcome is handed over and taken; the write waits at the gate
        steps.release(3);
        Await.until(SOON, "every handler returned", () -> returned.get() == 4);
        Thread.sleep(200); // their outcomes are handed over and wait behind that write
        gate.countDown();
        for (JobId id : ids) awaitState(id, JobState.DONE);

        // Two: the first outcome, then the three that waited, in one call. One, should the writer come round
        // only after all four were handed over (a slow machine); never one call per outcome.
        assertThat(store.calls("recordOutcomes")).as("calls writing the 4 outcomes").isBetween(1, 2);
        assertThat(store.calls("recordOutcomesThenClaim")).isZero();
    }

    private static boolean threadNamed(String name) {
        return Thread.getAllStackTraces().keySet().stream().anyMatch(t -> t.getName().equals(name) && t.isAlive());
    }
}
