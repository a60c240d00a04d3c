package io.jobq.application.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.jobq.application.fake.Await;
import io.jobq.application.fake.InMemoryJobStore;
import io.jobq.application.fake.ManualClock;
import io.jobq.application.fake.ManualWakeupChannel;
import io.jobq.application.port.ExpiredLeaseDecider;
import io.jobq.application.port.JobStore;
import io.jobq.application.port.NewJob;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.JobState;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.lease.WorkerId;
import io.jobq.domain.retry.BackoffPolicy;
import io.jobq.domain.retry.RetryPolicy;
import io.jobq.domain.tenant.TenantId;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The worker against the in-memory fakes. The store's clock is a {@link ManualClock}, so leases and
 * backoff move only when a test advances it; the worker's own waits (poll, heartbeat, grace) are
 * real time, kept short. Every wait is a bounded poll for a condition.
 */
class WorkerTest {
    /** Upper bound for things that should happen "soon"; generous so a loaded CI machine passes. */
    static final Duration SOON = Duration.ofSeconds(10);
    static final WorkerId WORKER = WorkerId.of("w-test");
    static final TenantId TENANT = TenantId.of("acme");
    static final ObjectMapper JSON = new ObjectMapper();

    /**
     * Short worker-side timings; the fallback poll is a long 60 s so that only wake-ups, freed slots
     * and promotions start a claim, and a broken wake-up path shows as a timeout.
     */
    static final WorkerSettings FAST = WorkerSettings.DEFAULTS
            .withWorkerId(WORKER)
            .withPollInterval(Duration.ofSeconds(60))
            .withHeartbeatInterval(Duration.ofMillis(50))
            .withMaintenanceInterval(Duration.ofMillis(50))
            .withGracePeriod(Duration.ofSeconds(5));

    /**
     * Every retry exactly 1 ms later: a failed job is due again as soon as the test moves the clock 1 s, and
     * never before. (A 1 ms window draws 0 or 1 ms; a generator whose every bit is set always draws the top.)
     */
    static final RetryPolicy QUICK_RETRIES =
            new RetryPolicy(new BackoffPolicy(Duration.ofMillis(1), Duration.ofMillis(1), () -> -1L));
    /** Reaps as a worker with {@link #QUICK_RETRIES} does. */
    static final ExpiredLeaseDecider QUICK_REAP = ExpiredLeaseDecider.by(QUICK_RETRIES);

    ManualClock clock;
    InMemoryJobStore store;
    ManualWakeupChannel wakeups;
    RecordingListener events;
    HandlerRegistry handlers;
    BlockingHandler blocking;
    StubbornHandler stubborn;
    final List<Worker> workers = new ArrayList<>();

    @BeforeEach
    void fixture() {
        clock = new ManualClock();
        store = new InMemoryJobStore(clock);
        wakeups = new ManualWakeupChannel();
        events = new RecordingListener();
        blocking = new BlockingHandler();
        stubborn = new StubbornHandler();
        handlers = HandlerRegistry.withBuiltIns().register("block", blocking).register("stubborn", stubborn);
    }

    @AfterEach
    void closeWorkers() {
        blocking.release.countDown();
        stubborn.letGo.countDown();
        workers.forEach(Worker::close);
    }

    Worker start(WorkerSettings settings) {
        Worker worker = Worker.builder(store, handlers).wakeups(wakeups).settings(settings).clock(clock)
                .listener(events).retryPolicy(QUICK_RETRIES).build();
        workers.add(worker);
        worker.start();
        return worker;
    }

    JobId enqueue(String task, String payload) {
        return enqueue(NewJob.of(TENANT, QueueName.DEFAULT, TaskName.of(task), payload));
    }

    JobId enqueue(NewJob job) {
        return store.enqueue(job).job().id();
    }

    Job awaitState(JobId id, JobState state) {
        Await.until(SOON, "job " + id + " " + state.dbName(), () -> store.require(id).state() == state);
        return store.require(id);
    }

    static JsonNode json(String text) {
        try {
            return JSON.readTree(text);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /** Blocks each run until {@link #release} opens (or its context is cancelled, if asked to). */
    static final class BlockingHandler implements JobHandler {
        final CountDownLatch release = new CountDownLatch(1);
        final List<JobContext> contexts = new CopyOnWriteArrayList<>();
        final AtomicInteger invocations = new AtomicInteger();
        volatile boolean stopWhenCancelled;

        @Override
        public Optional<JsonNode> handle(JobContext ctx) throws InterruptedException {
            contexts.add(ctx);
            invocations.incrementAndGet();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!release.await(10, TimeUnit.MILLISECONDS)) {
                if (stopWhenCancelled && ctx.isCancelled()) break;
                if (System.nanoTime() > deadline) throw new IllegalStateException("never released");
            }
            return Optional.of(JsonNodeFactory.instance.objectNode().put("released", true));
        }
    }

    /**
     * Ignores interrupts and cancellation until {@link #letGo} opens (at the latest when the test ends):
     * a handler stuck in code that cannot be interrupted, such as a socket read without a timeout.
     */
    static final class StubbornHandler implements JobHandler {
        final CountDownLatch letGo = new CountDownLatch(1);
        final AtomicReference<Thread> thread = new AtomicReference<>();
        final AtomicInteger interruptsIgnored = new AtomicInteger();

        @Override
        public Optional<JsonNode> handle(JobContext ctx) {
            thread.set(Thread.currentThread());
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60); // never outlives the test JVM for long
            while (System.nanoTime() < deadline) {
                try {
                    if (letGo.await(10, TimeUnit.MILLISECONDS)) break;
                } catch (InterruptedException e) {
                    interruptsIgnored.incrementAndGet();
                }
            }
            return Optional.of(JsonNodeFactory.instance.objectNode().put("late", true));
        }
    }

    @Nested
    class Claiming {
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
            Worker worker = Worker.builder(store, handlers).settings(FAST.withListen(false)
                    .withPollInterval(Duration.ofMillis(100))).clock(clock).listener(events).retryPolicy(QUICK_RETRIES).build();
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
            start(FAST.withConcurrency(4).withClaimBatchSize(10));
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
            start(FAST.withConcurrency(8).withClaimBatchSize(3));
            Await.until(SOON, "8 jobs running", () -> blocking.invocations.get() == 8);

            assertThat(events.claims).extracting(List::size).containsExactly(3, 3, 2);
        }
    }

    @Nested
    class Outcomes {
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
            start(FAST.withTaskTimeout(TaskName.of("sleep"), Duration.ofMillis(200)));

            Job failed = awaitState(id, JobState.SCHEDULED);
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));
            assertThat(failed.attempts()).isEqualTo(1);
            assertThat(failed.lastError().orElseThrow()).contains("timed out after 200 ms");
        }

        @Test
        void aTimeoutOnlyAppliesToItsOwnTask() {
            JobId id = enqueue("sleep", "{\"ms\": 300}");
            start(FAST.withTaskTimeout(TaskName.of("block"), Duration.ofMillis(100)));

            assertThat(awaitState(id, JobState.DONE).lastError()).isEmpty();
        }

        @Test
        void theDefaultTimeoutAppliesToTasksWithoutTheirOwn() {
            JobId id = enqueue("sleep", "{\"ms\": 20000}");
            start(FAST.withDefaultTaskTimeout(Optional.of(Duration.ofMillis(200))));

            Job failed = awaitState(id, JobState.SCHEDULED);
            assertThat(failed.attempts()).isEqualTo(1);
            assertThat(failed.lastError().orElseThrow()).contains("task 'sleep' timed out after 200 ms");
        }

        @Test
        void aTasksOwnTimeoutOverridesTheDefault() {
            JobId id = enqueue("sleep", "{\"ms\": 300}");
            start(FAST.withDefaultTaskTimeout(Optional.of(Duration.ofMillis(100)))
                    .withTaskTimeout(TaskName.of("sleep"), Duration.ofSeconds(20)));

            assertThat(awaitState(id, JobState.DONE).lastError()).isEmpty();
        }
    }

    /** A handler that ignores its timeout's interrupt must not hold its slot, or its lease, forever. */
    @Nested
    class HungHandlers {
        static final WorkerSettings ONE_SLOT = FAST.withConcurrency(1)
                .withTaskTimeout(TaskName.of("stubborn"), Duration.ofMillis(200));

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
            assertThat(Worker.timeoutGrace(Duration.ofMillis(200))).isEqualTo(Duration.ofMillis(200));
            assertThat(Worker.timeoutGrace(Duration.ofMinutes(15))).isEqualTo(Duration.ofSeconds(5));
        }
    }

    @Nested
    class Leases {
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
            start(FAST.withMaintenanceEnabled(false).withHeartbeatInterval(Duration.ofMillis(heartbeatMs)));
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
            start(FAST.withMaintenanceEnabled(false));
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
         * A store outage longer than the lease: no heartbeat gets through, so once the store is back any
         * worker may reap the lease and run the job again. The worker flags the run's lease as in jeopardy
         * and says why, without cancelling it; the outcome is still offered, and here the store (whose
         * clock did not move, so nothing was reaped) takes it.
         */
        @Test
        void aStoreOutageLongerThanTheLeaseFlagsTheLeaseAsInJeopardy() {
            JobId id = enqueue("block", "{}");
            start(FAST.withMaintenanceEnabled(false).withLease(Duration.ofSeconds(1)).withHeartbeatInterval(Duration.ofMillis(100)));
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
            assertThat(done.result().map(WorkerTest::json)).as("not interrupted: the handler's own result")
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
            start(FAST.withMaintenanceEnabled(false).withLease(Duration.ofSeconds(1)).withHeartbeatInterval(Duration.ofMillis(100)));
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
            start(FAST.withMaintenanceEnabled(false).withLease(Duration.ofSeconds(5)).withHeartbeatInterval(Duration.ofMillis(100)));
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

        @Test
        void aCompletionRejectedBecauseTheJobMovedOnIsDiscardedNotReportedDone() {
            // The stale-worker case (R02): reaped and re-claimed by another worker before the handler
            // returns, and no heartbeat ran in between to notice.
            JobId id = enqueue("block", "{}");
            start(FAST.withMaintenanceEnabled(false).withHeartbeatInterval(Duration.ofSeconds(29)));
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
    }

    @Nested
    class Shutdown {
        @Test
        void closeLetsTheJobInHandFinishKeepsHeartbeatingAndClaimsNothingMore() throws Exception {
            JobId running = enqueue("sleep", "{\"ms\": 1500}");
            Worker worker = start(FAST.withGracePeriod(Duration.ofSeconds(10)));
            Await.until(SOON, "the job claimed", () -> events.wasClaimed(running));

            Thread closer = Thread.ofPlatform().start(worker::close);
            long closeBegan = System.nanoTime();
            Await.until(SOON, "close() to stop listening", wakeups::isClosed);
            int claimsAtClose = store.calls("claim");
            int beatsAtClose = events.heartbeats.size();
            // Runnable work arrives during shutdown; the finishing job frees a slot, which would
            // prompt a still-running claim loop to take it.
            JobId late = enqueue("noop", "{}");
            closer.join(Duration.ofSeconds(15));
            Duration closeTook = Duration.ofNanos(System.nanoTime() - closeBegan);

            assertThat(closer.isAlive()).isFalse();
            assertThat(closeTook).isLessThan(Duration.ofSeconds(10));
            Job done = store.require(running);
            assertThat(done.state()).isEqualTo(JobState.DONE);
            assertThat(done.attempts()).isEqualTo(1);
            assertThat(store.require(late).state()).isEqualTo(JobState.QUEUED);
            assertThat(store.calls("claim")).isEqualTo(claimsAtClose);
            assertThat(events.heartbeats.size() - beatsAtClose)
                    .as("heartbeats while the in-hand job finished during shutdown").isGreaterThanOrEqualTo(3);
            assertThat(events.stopped.getCount()).isZero();
        }

        @Test
        void closeReturnsAtTheGracePeriodAndLeavesAnUnfinishedJobToItsLease() {
            JobId id = enqueue("sleep", "{\"ms\": 20000}");
            Worker worker = start(FAST.withGracePeriod(Duration.ofMillis(300)));
            Await.until(SOON, "the job claimed", () -> events.wasClaimed(id));

            long began = System.nanoTime();
            worker.close();
            Duration took = Duration.ofNanos(System.nanoTime() - began);

            assertThat(took).isBetween(Duration.ofMillis(250), Duration.ofMillis(300).plus(Duration.ofSeconds(2)));
            assertThat(events.discards).extracting(RecordingListener.Discard::reason)
                    .containsExactly(DiscardReason.SHUTDOWN);
            // Nothing was written for it: still running under the old lease, never done.
            Await.holdsWithin(Duration.ofMillis(200), () -> false); // let an (incorrect) late write land
            assertThat(store.require(id).state()).isEqualTo(JobState.RUNNING);
            assertThat(store.calls("complete") + store.calls("fail")).isZero();
            // The lease lapses and maintenance (here: the test) reaps it for another worker.
            clock.advance(Duration.ofSeconds(31));
            assertThat(store.reapExpiredLeases(10, QUICK_REAP)).isEqualTo(1);
            assertThat(store.require(id).state()).isEqualTo(JobState.SCHEDULED);
        }

        @Test
        void closeIsIdempotentAndAWorkerCannotBeRestarted() {
            Worker worker = start(FAST);
            worker.close();
            worker.close();

            assertThat(events.stopped.getCount()).isZero();
            assertThatThrownBy(worker::start).isInstanceOf(IllegalStateException.class);
        }

        @Test
        void closingANeverStartedWorkerReturnsAtOnce() {
            Worker worker = Worker.builder(store, handlers).wakeups(wakeups).settings(FAST).build();
            worker.close();

            assertThat(wakeups.isClosed()).isTrue();
            assertThat(store.calls("claim")).isZero();
        }

        @Test
        void theShutdownHookClosesTheWorker() throws Exception {
            Worker worker = start(FAST);
            Thread hook = worker.shutdownHook();
            hook.start();
            hook.join(Duration.ofSeconds(10));

            assertThat(events.stopped.getCount()).isZero();
        }
    }

    @Nested
    class StoreOutages {
        @Test
        void aWorkerSurvivesAnOutageAndFinishesJobsAfterwards() {
            JobId id = enqueue("noop", "{}");
            store.setAvailable(false);
            Worker worker = start(FAST.withOutageBackoffCap(Duration.ofMillis(400)));

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
            start(FAST.withOutageBackoffCap(Duration.ofMillis(800)));
            // Counted from the first try, so a claim thread that starts late does not shorten the window.
            Await.until(SOON, "the first failed claim", () -> store.calls("claim") >= 1);

            Await.holdsWithin(Duration.ofSeconds(1), () -> false);
            // 100, 200, 400, 800 ms pauses (each jittered down to half at most): at most ~8 tries in 1 s.
            assertThat(store.calls("claim")).isBetween(2, 10);
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
            start(FAST.withMaintenanceEnabled(false));

            Await.until(SOON, "the discard", () -> !events.discards.isEmpty());
            store.setAvailable(true);

            assertThat(events.storeErrors("complete")).isEqualTo(Worker.WRITE_ATTEMPTS);
            assertThat(events.discards).extracting(RecordingListener.Discard::reason)
                    .containsExactly(DiscardReason.WRITE_FAILED);
            assertThat(events.completed).isEmpty();
            assertThat(store.require(id).state()).isEqualTo(JobState.RUNNING);
        }

        @Test
        void aListenerThatThrowsDoesNotStopTheWorker() {
            Worker worker = Worker.builder(store, handlers).wakeups(wakeups).settings(FAST).clock(clock)
                    .listener(new WorkerListener() {
                        @Override
                        public void claimed(List<Job> jobs) {
                            throw new IllegalStateException("listener bug");
                        }
                    }).build();
            workers.add(worker);
            JobId first = enqueue("noop", "{}");
            worker.start();
            awaitState(first, JobState.DONE);

            JobId second = enqueue("noop", "{}");
            wakeups.wakeAll();
            awaitState(second, JobState.DONE);
        }
    }

    @Test
    void aWakeupChannelThatFailsToStartLeavesTheWorkerClosed() {
        wakeups.start(java.util.Set.of(QueueName.DEFAULT), () -> {}); // a second start() throws
        Worker worker = Worker.builder(store, handlers).wakeups(wakeups).settings(FAST).listener(events).build();
        workers.add(worker);

        assertThatThrownBy(worker::start).isInstanceOf(IllegalStateException.class).hasMessageContaining("already started");
        worker.close();
        assertThat(store.calls("claim")).isZero();
        assertThatThrownBy(worker::start).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void listeningWithoutAWakeupChannelIsRefused() {
        assertThatThrownBy(() -> Worker.builder(store, handlers).settings(FAST).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("WakeupChannel");
    }

    @Test
    void theDefaultWorkerIdIsHostPidRandom() {
        Worker a = Worker.builder(store, handlers).wakeups(wakeups).build();
        Worker b = Worker.builder(store, handlers).wakeups(new ManualWakeupChannel()).build();

        String pid = Long.toString(ProcessHandle.current().pid());
        assertThat(a.id().value()).matches("[A-Za-z0-9_.:-]+-" + pid + "-[0-9a-f]{4}");
        assertThat(a.id()).isNotEqualTo(b.id()); // 1 in 65,536 chance of a false failure
    }
}
