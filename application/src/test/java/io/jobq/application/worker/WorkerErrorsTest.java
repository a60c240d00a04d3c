package io.jobq.application.worker;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.jobq.application.fake.Await;
import io.jobq.application.port.StoreUnavailableException;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.JobState;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Errors (not exceptions) thrown into the worker from every side: the store, a listener, a handler,
 * the payload parser, the wake-up channel. No thread of the worker may die of one; a fatal one goes
 * to the {@link FatalErrorPolicy}, here a recording one that returns, so the test JVM lives on.
 */
class WorkerErrorsTest extends WorkerFixture {
    record Fatal(String where, Throwable error) {}

    final List<Fatal> fatals = new CopyOnWriteArrayList<>();

    /** A worker whose fatal errors are recorded in {@link #fatals} instead of halting the test JVM. */
    Worker start(WorkerSettings settings, WorkerListener listener, ObjectMapper mapper) {
        return start(Worker.builder(store, handlers).settings(settings).listener(listener).objectMapper(mapper)
                .fatalErrors((where, error) -> fatals.add(new Fatal(where, error))));
    }

    @Override
    Worker start(WorkerSettings settings) {
        return start(settings, events, Worker.defaultMapper());
    }

    /** The worker still claims and runs: a new job, announced by a wake-up, ends done. */
    void assertStillWorking() {
        JobId next = enqueue("noop", "{}");
        wakeups.wakeAll();
        awaitState(next, JobState.DONE);
    }

    @Nested
    class LoopsSurviveErrors {
        @Test
        void theClaimLoopSurvivesAnErrorFromTheStore() {
            JobId id = enqueue("noop", "{}");
            store.throwOnNextCall("claim", new NoClassDefFoundError("org/postgresql/Missing"));
            start(FAST);

            awaitState(id, JobState.DONE);
            assertThat(events.storeErrors).singleElement().satisfies(e -> {
                assertThat(e.operation()).isEqualTo("claim");
                assertThat(e.error()).hasCauseInstanceOf(NoClassDefFoundError.class);
            });
            assertThat(fatals).isEmpty();
        }

        @Test
        void theHeartbeatSurvivesAnErrorFromTheStore() {
            JobId id = enqueue("block", "{}");
            start(FAST.toBuilder().maintenanceEnabled(false).build());
            Await.until(SOON, "the job running", () -> blocking.invocations.get() == 1);
            store.throwOnNextCall("heartbeat", new AssertionError("store bug"));

            Await.until(SOON, "the failed heartbeat reported", () -> events.storeErrors("heartbeat") == 1);
            int beats = events.heartbeats.size();
            Await.until(SOON, "heartbeats going on", () -> events.heartbeats.size() >= beats + 2);
            blocking.release.countDown();
            assertThat(awaitState(id, JobState.DONE).attempts()).isEqualTo(1);
        }

        @Test
        void maintenanceSurvivesErrorsFromTheStore() {
            store.throwOnNextCall("reapExpiredLeases", new ExceptionInInitializerError("static init of a store class"));
            store.throwOnNextCall("promoteDue", new StackOverflowError());
            start(FAST);

            Await.until(SOON, "both failures reported", () -> events.maintenanceErrors.get() == 2);
            int runs = events.maintenanceRuns.get();
            Await.until(SOON, "maintenance passes going on", () -> events.maintenanceRuns.get() >= runs + 2);
            assertThat(fatals).isEmpty();
        }

        @Test
        void listenerCallbacksThrowingErrorsDoNotStopTheWorker() {
            WorkerListener faulty = new WorkerListener() {
                @Override
                public void claimed(List<Job> jobs) {
                    throw new AssertionError("listener bug");
                }

                @Override
                public void completed(Job job) {
                    throw new NoClassDefFoundError("io/micrometer/Missing");
                }
            };
            JobId first = enqueue("noop", "{}");
            start(FAST, faulty, Worker.defaultMapper());
            awaitState(first, JobState.DONE);

            assertStillWorking();
            assertThat(fatals).isEmpty();
        }
    }

    @Nested
    class HandlerErrors {
        static Stream<Arguments> nonFatal() {
            return Stream.of(
                    Arguments.of("StackOverflowError", (Supplier<Error>) () -> new StackOverflowError(), StackOverflowError.class),
                    Arguments.of("AssertionError", (Supplier<Error>) () -> new AssertionError("expected 3"), AssertionError.class),
                    Arguments.of("NoClassDefFoundError", (Supplier<Error>) () -> new NoClassDefFoundError("com/acme/Gone"),
                            NoClassDefFoundError.class),
                    Arguments.of("ExceptionInInitializerError",
                            (Supplier<Error>) () -> new ExceptionInInitializerError(new IllegalStateException("no config")),
                            ExceptionInInitializerError.class));
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("nonFatal")
        void anErrorFailsOnlyThatRunRetryablyNamingTheError(String name, Supplier<Error> error, Class<?> type) {
            handlers.register("erring", ctx -> {
                throw error.get();
            });
            JobId id = enqueue("erring", "{}");
            start(FAST);

            Job failed = awaitState(id, JobState.SCHEDULED);
            assertThat(failed.attempts()).isEqualTo(1);
            assertThat(failed.lastError().orElseThrow()).startsWith(type.getName());
            assertThat(fatals).isEmpty();
            assertStillWorking();
        }

        @Test
        void aRealStackOverflowInAHandlerFailsOnlyThatRun() {
            handlers.register("recursive", ctx -> {
                recurse(0);
                return java.util.Optional.empty();
            });
            JobId id = enqueue("recursive", "{}");
            start(FAST);

            assertThat(awaitState(id, JobState.SCHEDULED).lastError().orElseThrow()).startsWith("java.lang.StackOverflowError");
            assertThat(fatals).isEmpty();
            assertStillWorking();
        }

        static Stream<Arguments> fatal() {
            return Stream.of(
                    Arguments.of((Supplier<Error>) () -> new OutOfMemoryError("Java heap space")),
                    Arguments.of((Supplier<Error>) () -> new InternalError("a VM bug")),
                    Arguments.of((Supplier<Error>) () -> new UnknownError("who knows")));
        }

        @ParameterizedTest
        @MethodSource("fatal")
        void aFatalErrorGoesToThePolicyOnce(Supplier<Error> error) {
            Error thrown = error.get();
            handlers.register("exhausting", ctx -> {
                throw thrown;
            });
            JobId id = enqueue("exhausting", "{}");
            start(FAST);

            Await.until(SOON, "the policy called", () -> !fatals.isEmpty());
            assertThat(fatals).singleElement().satisfies(f -> {
                assertThat(f.error()).isSameAs(thrown);
                assertThat(f.where()).isEqualTo("handler");
            });
            // This policy returns (the default would have halted the JVM): the run then fails as any other.
            assertThat(awaitState(id, JobState.SCHEDULED).lastError().orElseThrow()).startsWith(thrown.getClass().getName());
        }
    }

    @Nested
    class FatalErrorsElsewhere {
        @Test
        void anOutOfMemoryErrorWrappedInAStoreExceptionGoesToThePolicy() {
            // As the PostgreSQL driver reports running out of memory while reading a result.
            OutOfMemoryError oom = new OutOfMemoryError("Java heap space");
            store.throwOnNextCall("claim", new StoreUnavailableException("claim",
                    new SQLException("Ran out of memory retrieving query results.", "53200", oom)));
            JobId id = enqueue("noop", "{}");
            start(FAST);

            Await.until(SOON, "the policy called", () -> !fatals.isEmpty());
            assertThat(fatals).singleElement().satisfies(f -> {
                assertThat(f.where()).isEqualTo("store call");
                assertThat(f.error()).hasRootCause(oom);
            });
            awaitState(id, JobState.DONE);
        }

        /**
         * A payload the worker cannot parse for lack of memory: the claim thread meets the error. The run
         * is not started, its slot is given back, the rest of the batch runs, and the job is left to its lease.
         */
        @Test
        void anOutOfMemoryErrorWhileParsingAPayloadGoesToThePolicyAndTheBatchRunsOn() {
            JobId before = enqueue("noop", "{}");
            JobId poison = enqueue("noop", "{\"explode\": \"oom\"}");
            JobId after = enqueue("noop", "{}");
            Worker worker = start(FAST.toBuilder().concurrency(3).claimBatchSize(3).build(), events, explodingMapper());

            awaitState(before, JobState.DONE);
            awaitState(after, JobState.DONE);
            assertThat(events.claims).singleElement().satisfies(c -> assertThat(c).hasSize(3));
            assertThat(fatals).singleElement().satisfies(f -> {
                assertThat(f.error()).isInstanceOf(OutOfMemoryError.class);
                assertThat(f.where()).isEqualTo("start of a run");
            });
            assertThat(store.require(poison).state()).as("left to its lease").isEqualTo(JobState.RUNNING);
            Await.until(SOON, "nothing in hand", () -> worker.inHandCount() == 0);

            // All three slots are free again: three blocking jobs run at once.
            for (int i = 0; i < 3; i++) enqueue("block", "{}");
            wakeups.wakeAll();
            Await.until(SOON, "three runs at once", () -> blocking.invocations.get() == 3);
        }

        @Test
        void aNonFatalErrorWhileParsingAPayloadFailsThatRunRetryably() {
            JobId poison = enqueue("noop", "{\"explode\": \"stack\"}");
            start(FAST, events, explodingMapper());

            Job failed = awaitState(poison, JobState.SCHEDULED);
            assertThat(failed.lastError().orElseThrow())
                    .contains("could not be parsed").contains("java.lang.StackOverflowError");
            assertThat(fatals).isEmpty();
            assertStillWorking();
        }
    }

    @Nested
    class Shutdown {
        @Test
        void anErrorFromTheWakeupChannelsCloseStillClosesTheWorker() {
            wakeups.throwOnClose(new AssertionError("driver bug"));
            Worker worker = start(FAST);
            Await.until(SOON, "the first claim", () -> store.calls("claim") >= 1);

            worker.close();

            assertThat(events.stopped.getCount()).isZero();
            assertClosedForGood(worker);
        }

        @Test
        void anErrorFromTheStoppedCallbackStillClosesTheWorker() {
            CountDownLatch stopped = new CountDownLatch(1);
            WorkerListener throwing = new WorkerListener() {
                @Override
                public void stopped() {
                    stopped.countDown();
                    throw new AssertionError("listener bug");
                }
            };
            Worker worker = start(FAST, throwing, Worker.defaultMapper());
            Await.until(SOON, "the first claim", () -> store.calls("claim") >= 1);

            worker.close();

            assertThat(stopped.getCount()).isZero();
            assertClosedForGood(worker);
        }

        void assertClosedForGood(Worker worker) {
            long began = System.nanoTime();
            worker.close(); // a half-closed worker would make this wait out the grace period (5 s)
            assertThat(Duration.ofNanos(System.nanoTime() - began)).isLessThan(Duration.ofSeconds(2));
            int claims = store.calls("claim");
            enqueue("noop", "{}");
            assertThat(Await.holdsWithin(Duration.ofMillis(300), () -> store.calls("claim") > claims)).isFalse();
        }
    }

    /** A mapper that cannot parse payloads holding "explode": with an OutOfMemoryError or a StackOverflowError. */
    static ObjectMapper explodingMapper() {
        return new ObjectMapper() {
            @Override
            public JsonNode readTree(String content) throws JsonProcessingException {
                if (content.contains("\"oom\"")) throw new OutOfMemoryError("Java heap space (simulated)");
                if (content.contains("\"stack\"")) throw new StackOverflowError();
                return super.readTree(content);
            }
        };
    }

    static int recurse(int depth) {
        return recurse(depth + 1) + 1;
    }
}
