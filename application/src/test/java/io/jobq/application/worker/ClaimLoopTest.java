package io.jobq.application.worker;

import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.application.fake.Await;
import io.jobq.application.fake.ManualWakeupChannel;
import io.jobq.application.port.ClaimRequest;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.JobState;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntSupplier;
import org.junit.jupiter.api.Test;

/**
 * {@link ClaimLoop}: when it claims (wake-ups, the fallback poll, freed slots), how much (never more than the
 * free slots), how it rides out a store outage, and how it adopts a claim whose answer was lost.
 */
class ClaimLoopTest extends WorkerFixture {
    @Test
    void aWakeupStartsAnIdleWorkersClaimLongBeforeTheFallbackPoll() {
        start(FAST);
        Await.until(SOON, "the first (empty) claim", () -> store.calls("claim") >= 1);
        JobId id = enqueue("noop", "{}");

        long woken = System.nanoTime();
        wakeups.wakeAll();
        awaitState(id, JobState.DONE);

        // The poll is 60 s; 10 s leaves a loaded machine room and still only a wake-up can make it.
        assertThat(Duration.ofNanos(System.nanoTime() - woken)).isLessThan(SOON);
    }

    @Test
    void withoutAWakeupAnIdleWorkerWaitsForTheFallbackPoll() {
        // The control for the test above: the job is only picked up because of the wake-up.
        start(FAST);
        Await.until(SOON, "the first (empty) claim", () -> store.calls("claim") >= 1);
        JobId id = enqueue("noop", "{}");

        assertThat(Await.holdsWithin(Duration.ofMillis(1500), () -> store.require(id).state() != JobState.QUEUED))
                .as("claimed without a wake-up despite a 60 s poll").isFalse();
    }

    @Test
    void inPollingOnlyModeTheFallbackPollFindsWork() {
        Worker worker = Worker.builder(store, handlers).settings(FAST.toBuilder().listen(false)
                .pollInterval(Duration.ofMillis(100)).build()).clock(clock).listener(events).retryPolicy(QUICK_RETRIES).build();
        workers.add(worker);
        worker.start();
        Await.until(SOON, "the first (empty) claim", () -> store.calls("claim") >= 1);
        JobId id = enqueue("noop", "{}");

        awaitState(id, JobState.DONE);
        assertThat(wakeups.isStarted()).isFalse();
    }

    @Test
    void eachClaimAsksForAtMostTheFreeSlots() {
        for (int i = 0; i < 10; i++) enqueue("block", "{}");
        start(FAST.toBuilder().concurrency(4).claimBatchSize(10).build());
        Await.until(SOON, "4 jobs running", () -> blocking.invocations.get() == 4);

        // Slots are full: however often it is woken, the worker claims no more.
        wakeups.wakeAll();
        assertThat(Await.holdsWithin(Duration.ofMillis(300), () -> events.claimedJobs() > 4)).isFalse();
        assertThat(events.claims).hasSize(1).first().satisfies(c -> assertThat(c).hasSize(4));

        blocking.release.countDown();
        Await.until(SOON, "all 10 done", () -> events.completed.size() == 10);
    }

    @Test
    void aBatchSmallerThanTheFreeSlotsIsTakenInSeveralClaims() {
        for (int i = 0; i < 8; i++) enqueue("block", "{}");
        start(FAST.toBuilder().concurrency(8).claimBatchSize(3).build());
        Await.until(SOON, "8 jobs running", () -> blocking.invocations.get() == 8);

        assertThat(events.claims).extracting(List::size).containsExactly(3, 3, 2);
    }

    @Test
    void aWorkerSurvivesAnOutageAndFinishesJobsAfterwards() {
        JobId id = enqueue("noop", "{}");
        store.setAvailable(false);
        Worker worker = start(FAST.toBuilder().outageBackoffCap(Duration.ofMillis(400)).build());

        Await.until(SOON, "three failed claims", () -> events.storeErrors("claim") >= 3);
        Await.until(SOON, "a failed maintenance pass", () -> events.maintenanceErrors.get() >= 1);
        store.setAvailable(true);

        awaitState(id, JobState.DONE);
        int runs = events.maintenanceRuns.get();
        Await.until(SOON, "maintenance running again", () -> events.maintenanceRuns.get() > runs);
        // The run leaves the worker's hands just after its completion is written: poll, do not read once.
        Await.until(SOON, "no run left in hand", () -> worker.inHandCount() == 0);
    }

    @Test
    void aClaimOutageBacksOffInsteadOfSpinning() {
        store.setAvailable(false);
        start(FAST.toBuilder().outageBackoffCap(Duration.ofMillis(800)).build());
        // The claim loop's calls: its claims, and first the look-up of runs leased to it (ClaimLoop), which
        // backs off the same way. Counted from the first try, so a claim thread that starts late does not
        // shorten the window.
        IntSupplier claimLoopCalls = () -> store.calls("claim") + store.calls("runsLeasedTo");
        Await.until(SOON, "the first failed call of the claim loop", () -> claimLoopCalls.getAsInt() >= 1);
        int first = claimLoopCalls.getAsInt();

        Await.holdsWithin(Duration.ofSeconds(1), () -> false);
        // 100, 200, 400, 800 ms pauses (each jittered down to half at most): at most ~8 tries in 1 s.
        assertThat(claimLoopCalls.getAsInt() - first + 1).isBetween(2, 10);
    }

    /**
     * The claim commits but its answer is lost (the connection fails after the commit). Without adoption the
     * job would sit running, leased to this worker, until its lease lapsed and a reaper burned an attempt it
     * never ran; with the 60 s poll and a store clock that does not move, it would never finish here.
     */
    @Test
    void aClaimWhoseAnswerWasLostIsAdoptedAndRunOnItsOwnAttempt() {
        JobId id = enqueue("noop", "{}");
        store.loseNextAnswer("claim");
        start(FAST);

        Job done = awaitState(id, JobState.DONE);
        assertThat(done.attempts()).isEqualTo(1);
        assertThat(events.storeErrors("claim")).isEqualTo(1);
    }

    /**
     * An earlier process with the same worker id claimed a job and died. Its run may have done its work, so
     * a new process must not run that attempt again: it is left to its lease, even when the new process
     * adopts a lost claim of its own.
     */
    @Test
    void runsAnEarlierProcessWithTheSameWorkerIdLeftAreNotAdopted() {
        JobId earlier = enqueue("noop", "{}");
        assertThat(store.claim(new ClaimRequest(List.of(QueueName.DEFAULT), WORKER, 1, Duration.ofSeconds(30)))).hasSize(1);
        JobId lost = enqueue("noop", "{}");
        store.loseNextAnswer("claim");
        start(FAST.toBuilder().maintenanceEnabled(false).build());

        awaitState(lost, JobState.DONE);
        Job left = store.require(earlier);
        assertThat(left.state()).isEqualTo(JobState.RUNNING);
        assertThat(left.attempts()).isEqualTo(1);
    }

    /**
     * The claim that refills a slot carries the outcome of the run that left it: one store call (one commit)
     * for both. A run that gave its slot back before handing its outcome over would let the claim go
     * without it, and each job would cost a claim and a write of its own.
     */
    @Test
    void theClaimThatRefillsASlotCarriesTheOutcomeOfTheRunThatLeftIt() {
        List<JobId> ids = new java.util.ArrayList<>();
        for (int i = 0; i < 5; i++) ids.add(enqueue("noop", "{}"));
        // The longest fill wait makes the outcome watchdog patient (2.1 s instead of 104 ms; with one slot and
        // claims of one there is nothing to fill): on a loaded CI machine a claim loop slower than 104 ms had its
        // outcome handed back to the run, written alone, and the count came out one short.
        start(FAST.toBuilder().concurrency(1).claimBatchSize(1).batchFillWait(WorkerSettings.MAX_BATCH_FILL_WAIT)
                .maintenanceEnabled(false).build());
        for (JobId id : ids) awaitState(id, JobState.DONE);

        // claim 1 alone; then outcome k with claim k + 1, the last with a claim that finds nothing
        Await.until(SOON, "the last outcome's call counted", () -> store.calls("recordOutcomesThenClaim") == 5);
        assertThat(store.calls("recordOutcomes")).as("outcome writes, all inside the calls carrying them").isEqualTo(5);
    }

    /**
     * The one call carrying a run's failure and the next claim commits, and its answer is lost. The run is
     * answered with the failure, tries again, finds its job as its own write left it (scheduled for a retry,
     * at its attempt, with its error) and reports the failure recorded, not discarded; the job the call
     * claimed is adopted and run on the attempt it gave it.
     */
    @Test
    void outcomesAndAClaimWhoseAnswerWasLostAreRecordedOnceAndTheClaimIsAdopted() {
        handlers.register("boom", ctx -> {
            throw new IllegalStateException("boom");
        });
        JobId failing = enqueue("boom", "{}");
        JobId next = enqueue("noop", "{}");
        store.loseNextAnswer("recordOutcomesThenClaim");
        start(FAST.toBuilder().concurrency(1).claimBatchSize(1).build());

        Job done = awaitState(next, JobState.DONE);
        assertThat(done.attempts()).as("run on the attempt the lost call gave it").isEqualTo(1);
        assertThat(store.calls("recordOutcomesThenClaim")).isGreaterThanOrEqualTo(1);
        Await.until(SOON, "the failure reported", () -> !events.failures.isEmpty());
        Job failed = store.require(failing);
        assertThat(failed.state()).isEqualTo(JobState.SCHEDULED);
        assertThat(failed.attempts()).isEqualTo(1);
        assertThat(events.failures).singleElement().satisfies(f -> assertThat(f.recorded().id()).isEqualTo(failing));
        assertThat(events.discards).as("no outcome reported lost: the retry found it written").isEmpty();
        assertThat(events.storeErrors("claim")).as("the lost call, reported by the claim loop").isEqualTo(1);
    }

    /**
     * A claim can fail where a plain write of outcomes would not (a constraint a queued row breaks, a
     * statement timeout): the outcomes it carried must not share its fate. They are written alone at once,
     * and their runs never see the claim's failure.
     */
    @Test
    void outcomesACarryingClaimFailedOnAreWrittenAloneAtOnce() {
        JobId first = enqueue("noop", "{}");
        JobId second = enqueue("noop", "{}");
        store.throwOnNextCall("recordOutcomesThenClaim", new IllegalStateException("the claim part was refused"));
        start(FAST.toBuilder().concurrency(1).claimBatchSize(1).build());

        awaitState(first, JobState.DONE);
        awaitState(second, JobState.DONE);
        assertThat(events.storeErrors("claim")).as("the failed call, reported by the claim loop").isEqualTo(1);
        assertThat(events.storeErrors("complete")).as("a run that saw the claim's failure").isZero();
        assertThat(events.discards).isEmpty();
    }

    @Test
    void runsEndingTogetherAreReplacedByOneFullClaimNotOneClaimEach() {
        assertThat(claimsAfterOneThenThreeRunsEnd(Duration.ofSeconds(1))).containsExactly(4, 4);
        // The same scenario without the fill wait: the first run to end is replaced on its own.
        assertThat(claimsAfterOneThenThreeRunsEnd(Duration.ZERO)).startsWith(4, 1);
    }

    /** Four runs; one ends, then (after 200 ms) three more: the sizes of the claims made. */
    private List<Integer> claimsAfterOneThenThreeRunsEnd(Duration fillWait) {
        Semaphore done = new Semaphore(0);
        String task = "gated-" + fillWait.toMillis(); // one task per scenario: the first one's jobs are all done
        handlers.register(task, ctx -> {
            done.acquire();
            return Optional.empty();
        });
        for (int i = 0; i < 8; i++) enqueue(task, "{}");
        RecordingListener seen = new RecordingListener();
        wakeups = new ManualWakeupChannel(); // a channel starts once: one per worker
        Worker worker = start(Worker.builder(store, handlers).listener(seen)
                .settings(FAST.toBuilder().concurrency(4).claimBatchSize(4).batchFillWait(fillWait).build()));
        Await.until(SOON, "4 claimed", () -> seen.claimedJobs() == 4);

        done.release(1);
        Await.holdsWithin(Duration.ofMillis(200), () -> seen.claims.size() > 2);
        done.release(3);
        Await.until(SOON, "8 claimed", () -> seen.claimedJobs() == 8);
        done.release(4);
        Await.until(SOON, "8 done", () -> seen.completed.size() == 8);
        worker.close();
        return seen.claims.stream().map(List::size).toList();
    }

    @Test
    void aClaimLoopWaitingToFillABatchClaimsNothingOnceCloseBegins() throws Exception {
        Semaphore done = new Semaphore(0);
        AtomicInteger returned = new AtomicInteger();
        handlers.register("gated", ctx -> {
            done.acquire();
            returned.incrementAndGet();
            return Optional.empty();
        });
        for (int i = 0; i < 2; i++) enqueue("gated", "{}");
        Worker w = start(FAST.toBuilder().concurrency(2).claimBatchSize(2).batchFillWait(Duration.ofSeconds(1))
                .gracePeriod(Duration.ofSeconds(3)).build());
        Await.until(SOON, "a full claim of 2", () -> events.claimedJobs() == 2);
        JobId late = enqueue("gated", "{}");
        done.release(1); // one run ends: after a full claim, the loop waits up to 1 s for the other slot
        Await.until(SOON, "one handler returned", () -> returned.get() == 1);
        Thread.sleep(50);
        int claimsBefore = store.calls("claim");

        Thread closer = Thread.ofPlatform().start(w::close);
        Thread.sleep(100);
        done.release(10);
        closer.join(SOON.toMillis());

        assertThat(store.calls("claim")).as("claims after close() began").isEqualTo(claimsBefore);
        assertThat(store.require(late).state()).isEqualTo(JobState.QUEUED);
    }
}
