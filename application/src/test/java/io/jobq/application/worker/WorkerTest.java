package io.jobq.application.worker;

import static io.jobq.application.fake.Json.json;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.jobq.application.fake.Await;
import io.jobq.application.fake.ManualWakeupChannel;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.JobState;
import io.jobq.domain.job.QueueName;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** {@link Worker}: its lifecycle (start, graceful close, the shutdown hook) and what it promises as a whole. */
class WorkerTest extends WorkerFixture {
    @Nested
    class Shutdown {
        @Test
        void closeLetsTheJobInHandFinishKeepsHeartbeatingAndClaimsNothingMore() throws Exception {
            JobId running = enqueue("sleep", "{\"ms\": 1500}");
            Worker worker = start(FAST.toBuilder().gracePeriod(Duration.ofSeconds(10)).build());
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
            Worker worker = start(FAST.toBuilder().gracePeriod(Duration.ofMillis(300)).build());
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

    /** A producer deployed first adds {@code priority}; the consumer's payload record does not have it yet. */
    record Greeting(String name) {}

    @Test
    void aTypedHandlerRunsAPayloadWithAFieldItsRecordLacks() {
        handlers.register("greet", ctx -> Optional.of(json("{\"hello\": \"" + ctx.payloadAs(Greeting.class).name() + "\"}")));
        JobId id = enqueue("greet", "{\"name\": \"ada\", \"priority\": \"high\"}");
        start(FAST);

        Job done = awaitState(id, JobState.DONE);

        assertThat(done.result()).hasValueSatisfying(r -> assertThat(json(r)).isEqualTo(json("{\"hello\": \"ada\"}")));
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
