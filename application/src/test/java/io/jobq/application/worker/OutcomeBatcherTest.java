package io.jobq.application.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.jobq.application.fake.Await;
import io.jobq.application.fake.InMemoryJobStore;
import io.jobq.application.fake.ManualClock;
import io.jobq.application.port.ClaimRequest;
import io.jobq.application.port.FencedWrite;
import io.jobq.application.port.NewJob;
import io.jobq.application.port.OutcomeWrite;
import io.jobq.application.port.StoreUnavailableException;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.JobState;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.lease.WorkerId;
import io.jobq.domain.retry.RetryDecision;
import io.jobq.domain.tenant.TenantId;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link OutcomeBatcher}: outcomes wait for the claim loop, which this test plays ({@link OutcomeBatcher#take},
 * {@link OutcomeBatcher#answer}); each run is answered only with its own write's answer, and no outcome waits on a
 * claim loop that does not come.
 */
class OutcomeBatcherTest {
    static final WorkerId W = WorkerId.of("w");
    static final Duration SOON = Duration.ofSeconds(10);
    /** Longer than any test here takes to play the claim loop, so that runs never write themselves meanwhile. */
    static final Duration PATIENT = Duration.ofSeconds(30);

    final InMemoryJobStore store = new InMemoryJobStore(new ManualClock());
    final WakeSignal claimLoop = new WakeSignal();
    final ExecutorService runs = Executors.newVirtualThreadPerTaskExecutor();
    /** The worker's timer, which runs the batcher's watchdog. */
    final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();

    @AfterEach
    void tearDown() {
        runs.shutdownNow();
        timer.shutdownNow();
    }

    OutcomeBatcher riding(int maxBatch, Duration waitForClaimLoop) {
        OutcomeBatcher b = new OutcomeBatcher(store, maxBatch, waitForClaimLoop, claimLoop);
        b.startRiding(timer);
        return b;
    }

    List<Job> running(int n) {
        for (int i = 0; i < n; i++) store.enqueue(NewJob.of(TenantId.of("t"), QueueName.DEFAULT, TaskName.of("noop"), "{}"));
        return store.claim(new ClaimRequest(List.of(QueueName.DEFAULT), W, n, Duration.ofSeconds(30)));
    }

    List<JobState> states(List<Job> jobs) {
        return jobs.stream().map(j -> store.get(j.id()).orElseThrow().state()).toList();
    }

    static OutcomeWrite done(Job j) {
        return new OutcomeWrite.Complete(j.fencingToken(), Optional.empty());
    }

    Future<FencedWrite> handOver(OutcomeBatcher b, OutcomeWrite write) {
        return runs.submit(() -> b.write(write, () -> {}));
    }

    /** Takes what is waiting once {@code n} outcomes are, as the claim loop would. */
    static List<OutcomeBatcher.Pending> takeWhenWaiting(OutcomeBatcher b, int n) {
        List<OutcomeBatcher.Pending> taken = new ArrayList<>();
        Await.until(SOON, n + " outcomes taken", () -> {
            taken.addAll(b.take());
            return taken.size() >= n;
        });
        return taken;
    }

    @Test
    void outcomesWaitForTheClaimLoopWhichWritesThemInOneCallAndEachRunGetsItsOwnAnswer() throws Exception {
        OutcomeBatcher b = riding(100, PATIENT);
        List<Job> jobs = running(3);
        List<Future<FencedWrite>> answers = jobs.stream().map(j -> handOver(b, done(j))).toList();

        List<OutcomeBatcher.Pending> taken = takeWhenWaiting(b, 3);
        Thread.sleep(50);
        assertThat(answers).as("nobody is answered before the store wrote it").noneMatch(Future::isDone);
        assertThat(states(jobs)).containsOnly(JobState.RUNNING);

        OutcomeBatcher.answer(taken, store.recordOutcomes(OutcomeBatcher.writes(taken)));
        for (int i = 0; i < 3; i++) {
            FencedWrite answer = answers.get(i).get(SOON.toSeconds(), TimeUnit.SECONDS);
            assertThat(answer).isInstanceOf(FencedWrite.Applied.class);
            assertThat(((FencedWrite.Applied) answer).job().id()).isEqualTo(jobs.get(i).id());
        }
        assertThat(states(jobs)).containsOnly(JobState.DONE);
    }

    @Test
    void theSlotIsGivenBackOnlyOnceTheOutcomeWaitsForTheClaimLoop() throws Exception {
        // The claim that refills the slot must find the outcome there to carry it.
        OutcomeBatcher b = riding(100, PATIENT);
        Job job = running(1).getFirst();
        AtomicBoolean waitingWhenHandedOver = new AtomicBoolean();
        Future<FencedWrite> answer = runs.submit(() -> b.write(done(job), () -> waitingWhenHandedOver.set(b.hasWaiting())));

        List<OutcomeBatcher.Pending> taken = takeWhenWaiting(b, 1);
        OutcomeBatcher.answer(taken, store.recordOutcomes(OutcomeBatcher.writes(taken)));
        assertThat(answer.get(SOON.toSeconds(), TimeUnit.SECONDS)).isInstanceOf(FencedWrite.Applied.class);
        assertThat(waitingWhenHandedOver).isTrue();
    }

    @Test
    void aClaimLoopThatFailsItsStatementFailsEveryWriteItCarried() throws Exception {
        OutcomeBatcher b = riding(100, PATIENT);
        List<Job> jobs = running(2);
        List<Future<FencedWrite>> answers = jobs.stream().map(j -> handOver(b, done(j))).toList();

        OutcomeBatcher.fail(takeWhenWaiting(b, 2), new StoreUnavailableException("claim", new IOException("down")));
        for (Future<FencedWrite> a : answers) {
            assertThatThrownBy(() -> a.get(SOON.toSeconds(), TimeUnit.SECONDS)).hasRootCauseMessage("down");
        }
        assertThat(states(jobs)).containsOnly(JobState.RUNNING);
    }

    /** The claim loop's last guard: of the writes it carried, the unanswered fail; the answered keep their answer. */
    @Test
    void failUnansweredFailsTheWritesLeftUnansweredAndLeavesTheAnsweredAlone() throws Exception {
        OutcomeBatcher b = riding(100, PATIENT);
        List<Job> jobs = running(2);
        Map<JobId, Future<FencedWrite>> answers = new HashMap<>();
        for (Job j : jobs) answers.put(j.id(), handOver(b, done(j)));
        List<OutcomeBatcher.Pending> taken = takeWhenWaiting(b, 2);
        List<OutcomeBatcher.Pending> first = taken.subList(0, 1);
        OutcomeBatcher.answer(first, store.recordOutcomes(OutcomeBatcher.writes(first)));

        OutcomeBatcher.failUnanswered(taken);
        Future<FencedWrite> answered = answers.get(taken.get(0).write().token().job());
        Future<FencedWrite> forgotten = answers.get(taken.get(1).write().token().job());
        assertThat(answered.get(SOON.toSeconds(), TimeUnit.SECONDS)).isInstanceOf(FencedWrite.Applied.class);
        assertThatThrownBy(() -> forgotten.get(SOON.toSeconds(), TimeUnit.SECONDS))
                .hasMessageContaining("the statement carrying this outcome did not answer it");
    }

    @Test
    void anAnswerForAnotherNumberOfWritesFailsThemAllRatherThanMisanswerOne() throws Exception {
        OutcomeBatcher b = riding(100, PATIENT);
        List<Job> jobs = running(2);
        List<Future<FencedWrite>> answers = jobs.stream().map(j -> handOver(b, done(j))).toList();
        List<OutcomeBatcher.Pending> taken = takeWhenWaiting(b, 2);

        OutcomeBatcher.answer(taken, store.recordOutcomes(List.of(taken.getFirst().write())));
        for (Future<FencedWrite> a : answers) {
            assertThatThrownBy(() -> a.get(SOON.toSeconds(), TimeUnit.SECONDS)).hasMessageContaining("answered 1 of 2");
        }
    }

    @Test
    void takeHandsOutAtMostMaxBatchAndNeverTwoOutcomesOfOneJob() throws Exception {
        OutcomeBatcher b = riding(2, PATIENT);
        List<Job> jobs = running(3);
        Job first = jobs.getFirst();
        // two attempts' outcomes of one job (a second from a stale run of it), and two other jobs
        handOver(b, done(first));
        handOver(b, new OutcomeWrite.Fail(first.fencingToken(), "stale", new RetryDecision.Dead(RetryDecision.Cause.PERMANENT_FAILURE), Optional.empty()));
        handOver(b, done(jobs.get(1)));
        handOver(b, done(jobs.get(2)));
        Await.until(SOON, "four outcomes waiting", () -> b.waiting() == 4);

        List<List<OutcomeBatcher.Pending>> takes = new ArrayList<>();
        while (b.hasWaiting()) takes.add(b.take());
        assertThat(takes).allSatisfy(t -> {
            assertThat(t).hasSizeLessThanOrEqualTo(2);
            assertThat(t.stream().map(p -> p.write().token().job()).distinct()).hasSameSizeAs(t);
        });
        assertThat(takes.stream().mapToInt(List::size).sum()).isEqualTo(4);
        takes.forEach(t -> OutcomeBatcher.answer(t, store.recordOutcomes(OutcomeBatcher.writes(t))));
    }

    @Test
    void anOutcomeTheClaimLoopDoesNotTakeInTimeIsWrittenByItsRunAndCannotBeTakenAfterwards() throws Exception {
        OutcomeBatcher b = riding(100, Duration.ofMillis(50));
        Job job = running(1).getFirst();
        long began = System.nanoTime();
        FencedWrite answer = handOver(b, done(job)).get(SOON.toSeconds(), TimeUnit.SECONDS);

        assertThat(answer).isInstanceOf(FencedWrite.Applied.class);
        assertThat(Duration.ofNanos(System.nanoTime() - began)).isGreaterThanOrEqualTo(Duration.ofMillis(50));
        assertThat(b.take()).as("written once, by its run").isEmpty();
    }

    @Test
    void anOutcomeTheClaimLoopTookIsItsToAnswerHoweverLongItsStatementTakes() throws Exception {
        OutcomeBatcher b = riding(100, Duration.ofMillis(20));
        Job job = running(1).getFirst();
        Future<FencedWrite> answer = handOver(b, done(job));
        List<OutcomeBatcher.Pending> taken = takeWhenWaiting(b, 1);
        Thread.sleep(200); // ten times the wait, five watchdog rounds: a slow statement

        List<FencedWrite> written = store.recordOutcomes(OutcomeBatcher.writes(taken));
        OutcomeBatcher.answer(taken, written);
        assertThat(written.getFirst()).as("nobody wrote it before the claim loop").isInstanceOf(FencedWrite.Applied.class);
        assertThat(answer.get(SOON.toSeconds(), TimeUnit.SECONDS)).isSameAs(written.getFirst());
    }

    @Test
    void aNullAnswerFailsTheWritesRatherThanHandThemBack() throws Exception {
        OutcomeBatcher b = riding(100, PATIENT);
        Job job = running(1).getFirst();
        Future<FencedWrite> answer = handOver(b, done(job));
        List<OutcomeBatcher.Pending> taken = takeWhenWaiting(b, 1);

        OutcomeBatcher.answer(taken, Arrays.asList((FencedWrite) null));
        assertThatThrownBy(() -> answer.get(SOON.toSeconds(), TimeUnit.SECONDS)).hasMessageContaining("answered 0 of 1");
        assertThat(states(List.of(job))).as("not written by its run either").containsOnly(JobState.RUNNING);
    }

    @Test
    void beforeTheClaimLoopRunsAndOnceItStopsRunsWriteTheirOwnOutcomesAtOnce() throws Exception {
        OutcomeBatcher b = new OutcomeBatcher(store, 100, PATIENT, claimLoop);
        List<Job> jobs = running(3);
        List<String> order = new ArrayList<>();
        FencedWrite before = b.write(done(jobs.get(0)), () -> order.add("handed over"));
        assertThat(before).isInstanceOf(FencedWrite.Applied.class);
        assertThat(order).containsExactly("handed over");

        b.startRiding(timer);
        Future<FencedWrite> waiting = handOver(b, done(jobs.get(1)));
        Await.until(SOON, "an outcome waiting", b::hasWaiting);
        b.stopRiding(); // shutdown: the one waiting is written by its run, well before PATIENT
        assertThat(waiting.get(SOON.toSeconds(), TimeUnit.SECONDS)).isInstanceOf(FencedWrite.Applied.class);
        assertThat(b.write(done(jobs.get(2)), () -> {})).isInstanceOf(FencedWrite.Applied.class);
        assertThat(b.hasWaiting()).isFalse();
        assertThat(states(jobs)).containsOnly(JobState.DONE);
    }

    @Test
    void aRunInterruptedWhileItWaitsStillGetsItsAnswerAndKeepsTheInterrupt() throws Exception {
        OutcomeBatcher b = riding(100, PATIENT);
        Job job = running(1).getFirst();
        AtomicBoolean interruptKept = new AtomicBoolean();
        Thread run = Thread.ofVirtual().start(() -> {
            b.write(done(job), () -> {});
            interruptKept.set(Thread.currentThread().isInterrupted());
        });
        List<OutcomeBatcher.Pending> taken = takeWhenWaiting(b, 1);
        run.interrupt();
        Thread.sleep(20);
        OutcomeBatcher.answer(taken, store.recordOutcomes(OutcomeBatcher.writes(taken)));
        run.join(SOON.toMillis());
        assertThat(interruptKept).isTrue();
        assertThat(states(List.of(job))).containsOnly(JobState.DONE);
    }
}
