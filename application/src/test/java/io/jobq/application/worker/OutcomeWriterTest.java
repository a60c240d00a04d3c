package io.jobq.application.worker;

import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.application.fake.Await;
import io.jobq.application.port.StoreUnavailableException;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.JobState;
import java.io.IOException;
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
 * of the worker, which writes every outcome waiting in one call, answers each run, and ends with the worker.
 */
class OutcomeWriterTest extends WorkerFixture {

    @Test
    void theWorkersWriterThreadWritesTheOutcomesBesideTheClaims() {
        store.setClaimsCarryOutcomes(false);
        List<JobId> ids = new ArrayList<>();
        for (int i = 0; i < 5; i++) ids.add(enqueue("noop", "{}"));
        Worker worker = start(FAST.toBuilder().concurrency(1).claimBatchSize(1).maintenanceEnabled(false).build());
        String writer = "jobq-outcomes-" + worker.id();
        for (JobId id : ids) awaitState(id, JobState.DONE);

        Await.until(SOON, "every run answered and reported done", () -> events.completed.size() == 5);
        assertThat(store.callers("recordOutcomes")).as("threads that wrote outcomes").containsExactly(writer);
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
    void oneWriteCarriesEveryOutcomeWaiting() {
        store.setClaimsCarryOutcomes(false);
        Semaphore steps = new Semaphore(0);
        handlers.register("step", ctx -> {
            steps.acquire();
            return Optional.empty();
        });
        List<JobId> ids = new ArrayList<>();
        for (int i = 0; i < 4; i++) ids.add(enqueue("step", "{}"));
        CountDownLatch gate = new CountDownLatch(1);
        store.gate("recordOutcomes", gate);
        // The longest fill wait keeps the batcher's watchdog (twice it, plus 100 ms) from handing the waiting
        // outcomes back to their runs while the gate holds the first write.
        Worker worker = start(FAST.toBuilder().concurrency(4).claimBatchSize(4).batchFillWait(WorkerSettings.MAX_BATCH_FILL_WAIT)
                .maintenanceEnabled(false).build());
        Await.until(SOON, "4 jobs claimed", () -> events.claimedJobs() == 4);

        steps.release(1);
        Await.until(SOON, "the first outcome's write held at the store", () -> store.waitingAtGate("recordOutcomes") == 1);
        steps.release(3);
        Await.until(SOON, "three outcomes waiting behind it", () -> worker.outcomesWaiting() == 3);
        gate.countDown();
        for (JobId id : ids) awaitState(id, JobState.DONE);

        Await.until(SOON, "every run answered and reported done", () -> events.completed.size() == 4);
        assertThat(store.calls("recordOutcomes")).as("the first outcome, then the three that waited, in one call").isEqualTo(2);
        assertThat(store.calls("recordOutcomesThenClaim")).isZero();
    }

    /** A write that fails fails its outcomes to their runs, which write them again; the writer goes on. */
    @Test
    void aFailedWriteIsTriedAgainByItsRunsAndTheWriterGoesOn() {
        store.setClaimsCarryOutcomes(false);
        store.throwOnNextCall("recordOutcomes", new StoreUnavailableException("recordOutcomes", new IOException("cut")));
        JobId first = enqueue("noop", "{}");
        start(FAST.toBuilder().concurrency(1).claimBatchSize(1).maintenanceEnabled(false).build());

        awaitState(first, JobState.DONE);
        Await.until(SOON, "the failure reported by the run", () -> events.storeErrors("complete") >= 1);
        JobId later = enqueue("noop", "{}");
        wakeups.wakeAll();
        awaitState(later, JobState.DONE);
        Await.until(SOON, "both runs answered and reported done", () -> events.completed.size() == 2);
    }

    private static boolean threadNamed(String name) {
        return Thread.getAllStackTraces().keySet().stream().anyMatch(t -> t.getName().equals(name) && t.isAlive());
    }
}
