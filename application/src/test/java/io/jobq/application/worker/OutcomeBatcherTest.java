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
import io.jobq.domain.job.JobState;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.lease.FencingToken;
import io.jobq.domain.lease.WorkerId;
import io.jobq.domain.tenant.TenantId;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@link OutcomeBatcher}: group commit of run outcomes, each run answered only after its flush. */
class OutcomeBatcherTest {
    static final WorkerId W = WorkerId.of("w");
    static final Duration SOON = Duration.ofSeconds(10);

    final InMemoryJobStore store = new InMemoryJobStore(new ManualClock());
    final ErrorReporter errors = new ErrorReporter(W, WorkerListener.NONE, (where, e) -> {});
    final ExecutorService runs = Executors.newVirtualThreadPerTaskExecutor();
    OutcomeBatcher batcher;

    @AfterEach
    void tearDown() throws Exception {
        runs.shutdownNow();
        if (batcher != null) batcher.close();
    }

    /** Handlers running, as the worker counts them: each run stops counting just before it hands its outcome over. */
    final AtomicInteger handlersRunning = new AtomicInteger();

    OutcomeBatcher start(int maxBatch, Duration flushWait, int handlersRunning) {
        this.handlersRunning.set(handlersRunning);
        batcher = new OutcomeBatcher(store, maxBatch, flushWait, this.handlersRunning::get, errors, "w");
        batcher.start();
        return batcher;
    }

    /** A run's handler returns and its outcome is handed over, as {@link JobRunner} does it. */
    FencedWrite handOver(OutcomeWrite write) {
        handlersRunning.updateAndGet(n -> Math.max(0, n - 1));
        return batcher.write(write);
    }

    List<Job> running(int n) {
        for (int i = 0; i < n; i++) store.enqueue(NewJob.of(TenantId.of("t"), QueueName.DEFAULT, TaskName.of("noop"), "{}"));
        return store.claim(new ClaimRequest(List.of(QueueName.DEFAULT), W, n, Duration.ofSeconds(30)));
    }

    static OutcomeWrite done(Job j) {
        return new OutcomeWrite.Complete(j.fencingToken(), Optional.empty());
    }

    /** Every run hands its outcome over at the same moment, from its own thread. */
    List<FencedWrite> writeTogether(List<OutcomeWrite> writes) throws Exception {
        CountDownLatch go = new CountDownLatch(1);
        List<Future<FencedWrite>> answers = new ArrayList<>();
        for (OutcomeWrite w : writes) {
            answers.add(runs.submit(() -> {
                go.await();
                return handOver(w);
            }));
        }
        go.countDown();
        List<FencedWrite> out = new ArrayList<>();
        for (Future<FencedWrite> a : answers) out.add(a.get(SOON.toSeconds(), TimeUnit.SECONDS));
        return out;
    }

    @Test
    void outcomesOfRunsEndingTogetherShareACommitWhereOneAtATimePaysOneEach() throws Exception {
        List<Job> jobs = running(16);
        start(100, Duration.ofMillis(500), 16);

        List<FencedWrite> answers = writeTogether(jobs.stream().map(OutcomeBatcherTest::done).toList());

        assertThat(answers).allMatch(FencedWrite::applied);
        assertThat(store.calls("recordOutcomes")).as("store calls for 16 outcomes").isLessThanOrEqualTo(2);

        // the same scenario without batching: one call per outcome
        List<Job> more = running(16);
        batcher.close();
        start(1, Duration.ofMillis(500), 16);
        int before = store.calls("recordOutcomes");
        assertThat(writeTogether(more.stream().map(OutcomeBatcherTest::done).toList())).allMatch(FencedWrite::applied);
        assertThat(store.calls("recordOutcomes") - before).isEqualTo(16);
    }

    @Test
    void aRunWhoseOthersHaveAllReportedIsWrittenAtOnceNotAfterTheFlushWait() throws Exception {
        List<Job> jobs = running(2);
        start(100, Duration.ofSeconds(30), 2);
        // the other run in hand has handed its outcome over too: nothing more to wait for
        long start = System.nanoTime();
        List<FencedWrite> answers = writeTogether(jobs.stream().map(OutcomeBatcherTest::done).toList());
        assertThat(answers).allMatch(FencedWrite::applied);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
    }

    @Test
    void aRunAloneInHandIsWrittenAtOnceAndMeetsAnOutageItself() {
        Job job = running(1).getFirst();
        start(100, Duration.ofSeconds(30), 1);
        store.setAvailable("recordOutcomes", false);

        // written by the run itself, the outage reaches it as the store threw it
        assertThatThrownBy(() -> handOver(done(job))).isInstanceOf(StoreUnavailableException.class);
        store.setAvailable("recordOutcomes", true);
        assertThat(handOver(done(job)).applied()).isTrue();
    }

    @Test
    void noRunIsAnsweredBeforeTheStoreHasWrittenItsOutcome() throws Exception {
        Job job = running(1).getFirst();
        start(100, Duration.ZERO, 2); // another handler still running: the outcome goes through the flusher
        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CompletableFuture<Void> busyStore = CompletableFuture.runAsync(() -> store.atomically(() -> {
            holding.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return null;
        }), runs);
        holding.await();

        Future<FencedWrite> answer = runs.submit(() -> handOver(done(job)));
        assertThat(Await.holdsWithin(Duration.ofMillis(300), answer::isDone)).as("answered while the store was held").isFalse();

        release.countDown();
        busyStore.get(SOON.toSeconds(), TimeUnit.SECONDS);
        assertThat(answer.get(SOON.toSeconds(), TimeUnit.SECONDS).applied()).isTrue();
        assertThat(store.require(job.id()).state()).isEqualTo(JobState.DONE);
    }

    @Test
    void aFailedFlushFailsItsWritesWhichCanBeTriedAgain() {
        Job job = running(1).getFirst();
        start(100, Duration.ZERO, 2); // another handler still running: the outcome goes through the flusher
        store.throwOnNextCall("recordOutcomes", new StoreUnavailableException("recordOutcomes", new IOException("down")));

        assertThatThrownBy(() -> handOver(done(job))).isInstanceOf(StoreUnavailableException.class);
        assertThat(store.require(job.id()).state()).isEqualTo(JobState.RUNNING);

        assertThat(handOver(done(job)).applied()).isTrue();
    }

    @Test
    void twoAttemptsOfOneJobAreWrittenInSeparateFlushes() throws Exception {
        Job job = running(1).getFirst();
        FencingToken other = new FencingToken(job.id(), W, job.attempts() + 1);
        start(100, Duration.ofMillis(200), 2);

        List<FencedWrite> answers = writeTogether(List.of(
                new OutcomeWrite.Fail(other, "stale", new io.jobq.domain.retry.RetryDecision.RetryAfter(Duration.ofSeconds(1))),
                done(job)));

        assertThat(answers.get(0)).isInstanceOf(FencedWrite.Rejected.class);
        assertThat(answers.get(1).applied()).isTrue();
        assertThat(store.calls("recordOutcomes")).isEqualTo(2);
    }

    @Test
    void threeOutcomesOfOneJobAreEachAnsweredInTheirOwnFlush() throws Exception {
        Job job = running(1).getFirst();
        start(100, Duration.ofMillis(200), 3);
        OutcomeWrite.Fail later = new OutcomeWrite.Fail(new FencingToken(job.id(), W, job.attempts() + 1), "stale",
                new io.jobq.domain.retry.RetryDecision.RetryAfter(Duration.ofSeconds(1)));
        OutcomeWrite.Fail latest = new OutcomeWrite.Fail(new FencingToken(job.id(), W, job.attempts() + 2), "stale",
                new io.jobq.domain.retry.RetryDecision.RetryAfter(Duration.ofSeconds(1)));

        List<FencedWrite> answers = writeTogether(List.of(later, done(job), latest));

        assertThat(answers.get(1).applied()).isTrue();
        assertThat(answers.get(0)).isInstanceOf(FencedWrite.Rejected.class);
        assertThat(answers.get(2)).isInstanceOf(FencedWrite.Rejected.class);
        assertThat(store.calls("recordOutcomes")).isEqualTo(3);
    }

    @Test
    void closingWritesWhatWasHandedOverAndLaterWritesGoStraightToTheStore() throws Exception {
        List<Job> jobs = running(2);
        start(100, Duration.ofSeconds(1), 2);
        Future<FencedWrite> first = runs.submit(() -> handOver(done(jobs.get(0))));
        Await.until(SOON, "the flusher waiting for the second run", () -> store.calls("recordOutcomes") == 0 && !first.isDone());

        batcher.close();

        assertThat(first.get(SOON.toSeconds(), TimeUnit.SECONDS).applied()).isTrue();
        assertThat(handOver(done(jobs.get(1))).applied()).isTrue();
        assertThat(store.require(jobs.get(1).id()).state()).isEqualTo(JobState.DONE);
    }
}
