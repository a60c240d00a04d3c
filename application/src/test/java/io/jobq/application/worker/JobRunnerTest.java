package io.jobq.application.worker;

import static io.jobq.application.fake.Json.json;
import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.application.fake.Await;
import io.jobq.application.port.JobStore;
import io.jobq.application.port.NewJob;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.JobState;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.retry.BackoffPolicy;
import io.jobq.domain.retry.RetryPolicy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * {@link JobRunner}: what a run comes to (done, retryable or permanent failure, timeout) for each thing a
 * handler or its payload can do, and how a handler that ignores its timeout is cut loose.
 */
class JobRunnerTest extends WorkerFixture {
    @Test
    void wordCountOfHelloJobQueueIsThree() {
        JobId id = enqueue("word_count", "{\"text\": \"hello job queue\"}");
        start(FAST);

        Job done = awaitState(id, JobState.DONE);
        assertThat(json(done.result().orElseThrow())).isEqualTo(json("{\"words\": 3}"));
        assertThat(done.attempts()).isEqualTo(1);
    }

    @Test
    void aHandlerFailingTwiceThenSucceedingEndsDoneAfterThreeAttempts() {
        // Each failure schedules the retry within 1 ms; moving the store clock 1 s makes it due,
        // and the worker's maintenance promotes it.
        events.onFailed = f -> clock.advance(Duration.ofSeconds(1));
        JobId id = enqueue("fail", "{\"times\": 2}");
        start(FAST);

        Job done = awaitState(id, JobState.DONE);
        assertThat(done.attempts()).isEqualTo(3);
        assertThat(json(done.result().orElseThrow())).isEqualTo(json("{\"succeeded_on_attempt\": 3}"));
        assertThat(events.failures).extracting(f -> f.recorded().state())
                .containsExactly(JobState.SCHEDULED, JobState.SCHEDULED);
        assertThat(done.lastError()).hasValue("java.lang.IllegalStateException: planned failure 2 of 2");
    }

    @Test
    void aRetryableFailureOnTheLastAttemptIsDead() {
        events.onFailed = f -> clock.advance(Duration.ofSeconds(1));
        JobId id = enqueue(NewJob.of(TENANT, QueueName.DEFAULT, TaskName.of("fail"), "{\"times\": 5}").withMaxAttempts(2));
        start(FAST);

        Job dead = awaitState(id, JobState.DEAD);
        assertThat(dead.attempts()).isEqualTo(2);
        // The listener hears of a failure just after the store records it.
        Await.until(SOON, "both failures reported", () -> events.failures.size() == 2);
        assertThat(events.failures).extracting(f -> f.recorded().state())
                .containsExactly(JobState.SCHEDULED, JobState.DEAD);
    }

    @Test
    void theWorkersRetryPolicyDecidesTheRetryAndTheStoreWritesItAsGiven() {
        // A 1 h window drawn from a seeded generator: a twin of the worker's policy knows its first draw.
        Duration hour = Duration.ofHours(1);
        Duration expected = new BackoffPolicy(hour, hour, new SplittableRandom(42)).delay(1);
        JobId id = enqueue("fail", "{\"times\": 1}");
        Worker worker = Worker.builder(store, handlers).wakeups(wakeups).settings(FAST).clock(clock).listener(events)
                .retryPolicy(new RetryPolicy(new BackoffPolicy(hour, hour, new SplittableRandom(42)))).build();
        workers.add(worker);
        worker.start();

        Job failed = awaitState(id, JobState.SCHEDULED);
        assertThat(failed.runAt()).isEqualTo(clock.instant().plus(expected));
    }

    @Test
    void aPermanentJobFailureIsDeadAfterOneAttempt() {
        JobId id = enqueue("fail", "{\"times\": 1, \"permanent\": true, \"message\": \"card declined for good\"}");
        start(FAST);

        Job dead = awaitState(id, JobState.DEAD);
        assertThat(dead.attempts()).isEqualTo(1);
        assertThat(dead.maxAttempts()).isEqualTo(Job.DEFAULT_MAX_ATTEMPTS);
        assertThat(dead.lastError()).hasValue("card declined for good");
    }

    @Test
    void aPermanentJobFailureWrappedInAnotherExceptionIsStillPermanent() {
        handlers.register("wrapped", ctx -> {
            throw new java.util.concurrent.CompletionException(new PermanentJobFailure("bad address"));
        });
        JobId id = enqueue("wrapped", "{}");
        start(FAST);

        assertThat(awaitState(id, JobState.DEAD).attempts()).isEqualTo(1);
    }

    @Test
    void aPayloadThatDoesNotBindIsAPermanentFailure() {
        JobId id = enqueue("word_count", "{\"txt\": \"typo in the field name\"}");
        start(FAST);

        Job dead = awaitState(id, JobState.DEAD);
        assertThat(dead.attempts()).isEqualTo(1);
        assertThat(dead.lastError().orElseThrow())
                .contains("does not bind to WordCountPayload").contains("text is required");
    }

    @Test
    void aPayloadThatIsNotJsonIsAPermanentFailure() {
        JobId id = store.enqueueUnparseable(NewJob.of(TENANT, QueueName.DEFAULT, TaskName.of("noop"), "{not json"));
        start(FAST);

        assertThat(awaitState(id, JobState.DEAD).lastError().orElseThrow()).contains("is not valid JSON");
    }

    @Test
    void anEmptyPayloadIsAPermanentFailureAndTheWorkerCarriesOn() {
        JobId empty = store.enqueueUnparseable(NewJob.of(TENANT, QueueName.DEFAULT, TaskName.of("noop"), ""));
        start(FAST);

        assertThat(awaitState(empty, JobState.DEAD).lastError().orElseThrow()).contains("is empty");
        JobId next = enqueue("noop", "{}");
        wakeups.wakeAll();
        awaitState(next, JobState.DONE);
    }

    @Test
    void aTaskWithoutAHandlerFailsRetryablyNamingTheTaskAndTheWorker() {
        JobId id = enqueue("resize_image", "{}");
        start(FAST);

        Job failed = awaitState(id, JobState.SCHEDULED);
        assertThat(failed.attempts()).isEqualTo(1);
        assertThat(failed.lastError().orElseThrow())
                .contains("no handler for task 'resize_image'").contains("on worker w-test");
    }

    @Test
    void aFailureMessageTheDatabaseCannotStoreIsSanitisedAndTheWorkerCarriesOn() {
        String nasty = "bad\u0000byte \ud800 " + "x".repeat(100_000) + " 😀";
        handlers.register("nasty", ctx -> {
            throw new IllegalStateException(nasty);
        });
        JobId bad = enqueue("nasty", "{}");
        start(FAST);

        Job failed = awaitState(bad, JobState.SCHEDULED);
        String error = failed.lastError().orElseThrow();
        assertThat(error).doesNotContain("\u0000").contains(io.jobq.domain.job.StoredText.TRUNCATION_MARKER).startsWith("java.lang");
        assertThat(error.getBytes(StandardCharsets.UTF_8).length).isLessThanOrEqualTo(JobStore.MAX_ERROR_BYTES);

        JobId next = enqueue("noop", "{}");
        wakeups.wakeAll();
        awaitState(next, JobState.DONE);
    }

    @Test
    void aTaskTimeoutInterruptsTheHandlerAndFailsTheJobRetryably() {
        JobId id = enqueue("sleep", "{\"ms\": 20000}");
        long started = System.nanoTime();
        start(FAST.toBuilder().taskTimeout(TaskName.of("sleep"), Duration.ofMillis(200)).build());

        Job failed = awaitState(id, JobState.SCHEDULED);
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));
        assertThat(failed.attempts()).isEqualTo(1);
        assertThat(failed.lastError().orElseThrow()).contains("timed out after 200 ms");
    }

    @Test
    void aTimeoutOnlyAppliesToItsOwnTask() {
        JobId id = enqueue("sleep", "{\"ms\": 300}");
        start(FAST.toBuilder().taskTimeout(TaskName.of("block"), Duration.ofMillis(100)).build());

        assertThat(awaitState(id, JobState.DONE).lastError()).isEmpty();
    }

    @Test
    void theDefaultTimeoutAppliesToTasksWithoutTheirOwn() {
        JobId id = enqueue("sleep", "{\"ms\": 20000}");
        start(FAST.toBuilder().defaultTaskTimeout(Optional.of(Duration.ofMillis(200))).build());

        Job failed = awaitState(id, JobState.SCHEDULED);
        assertThat(failed.attempts()).isEqualTo(1);
        assertThat(failed.lastError().orElseThrow()).contains("task 'sleep' timed out after 200 ms");
    }

    @Test
    void aTasksOwnTimeoutOverridesTheDefault() {
        JobId id = enqueue("sleep", "{\"ms\": 300}");
        start(FAST.toBuilder().defaultTaskTimeout(Optional.of(Duration.ofMillis(100)))
                .taskTimeout(TaskName.of("sleep"), Duration.ofSeconds(20)).build());

        assertThat(awaitState(id, JobState.DONE).lastError()).isEmpty();
    }

    /** A handler that ignores its timeout's interrupt must not hold its slot, or its lease, forever. */
    @Nested
    class HungHandlers {
        static final WorkerSettings ONE_SLOT = FAST.toBuilder().concurrency(1)
                .taskTimeout(TaskName.of("stubborn"), Duration.ofMillis(200)).build();

        @Test
        void itsRunIsFailedRetryablyAndItsSlotFreedWhileItStillRunsSoTheNextJobsRun() {
            JobId hung = enqueue("stubborn", "{}");
            Worker worker = start(ONE_SLOT);

            // 200 ms timeout, then 200 ms of grace (as long again, at most 5 s)
            Job failed = awaitState(hung, JobState.SCHEDULED);
            assertThat(failed.attempts()).isEqualTo(1);
            assertThat(failed.lastError().orElseThrow()).contains("task 'stubborn' timed out after 200 ms")
                    .contains("ignored the interrupt for 200 ms, so its slot was freed");
            assertThat(stubborn.interruptsIgnored).hasPositiveValue();
            assertThat(stubborn.thread.get().isAlive()).as("the hung handler still runs").isTrue();
            // No longer in hand: no longer heartbeated, so nothing keeps its lease alive.
            Await.until(SOON, "the hung run leaves the worker's hands", () -> worker.inHandCount() == 0);

            // The worker's only slot is free again: the next jobs run beside the hung thread.
            List<JobId> next = List.of(enqueue("noop", "{}"), enqueue("noop", "{}"), enqueue("noop", "{}"));
            wakeups.wakeAll();
            next.forEach(id -> awaitState(id, JobState.DONE));
            assertThat(stubborn.thread.get().isAlive()).isTrue();
        }

        @Test
        void whatItReturnsLateIsDiscardedAndGivesNoSecondSlotBack() throws InterruptedException {
            JobId hung = enqueue("stubborn", "{}");
            Worker worker = start(ONE_SLOT);
            awaitState(hung, JobState.SCHEDULED);
            Await.until(SOON, "the hung run leaves the worker's hands", () -> worker.inHandCount() == 0);

            stubborn.letGo.countDown();
            assertThat(stubborn.thread.get().join(SOON)).as("the stray run ends once let go").isTrue();

            Job after = store.require(hung);
            assertThat(after.state()).isEqualTo(JobState.SCHEDULED);
            assertThat(after.attempts()).isEqualTo(1);
            assertThat(after.result()).isEmpty();
            // Still one slot: of two blocking jobs only one runs.
            enqueue("block", "{}");
            enqueue("block", "{}");
            wakeups.wakeAll();
            Await.until(SOON, "a blocking job runs", () -> blocking.invocations.get() >= 1);
            assertThat(Await.holdsWithin(Duration.ofMillis(500), () -> blocking.invocations.get() > 1))
                    .as("a second job ran at once on a one-slot worker").isFalse();
        }

        @Test
        void theGraceIsAsLongAgainAsTheTimeoutAtMostFiveSeconds() {
            assertThat(JobRunner.timeoutGrace(Duration.ofMillis(200))).isEqualTo(Duration.ofMillis(200));
            assertThat(JobRunner.timeoutGrace(Duration.ofMinutes(15))).isEqualTo(Duration.ofSeconds(5));
        }
    }
}
