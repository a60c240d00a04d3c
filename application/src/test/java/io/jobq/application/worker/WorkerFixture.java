package io.jobq.application.worker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.jobq.application.fake.Await;
import io.jobq.application.fake.InMemoryJobStore;
import io.jobq.application.fake.ManualClock;
import io.jobq.application.fake.ManualWakeupChannel;
import io.jobq.application.port.ExpiredLeaseDecider;
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
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * What the worker's role tests share: a worker against the in-memory fakes. The store's clock is a
 * {@link ManualClock}, so leases and backoff move only when a test advances it; the worker's own waits
 * (poll, heartbeat, grace) are real time, kept short. Every wait is a bounded poll for a condition.
 */
abstract class WorkerFixture {
    /** Upper bound for things that should happen "soon"; generous so a loaded CI machine passes. */
    static final Duration SOON = Duration.ofSeconds(10);
    static final WorkerId WORKER = WorkerId.of("w-test");
    static final TenantId TENANT = TenantId.of("acme");

    /**
     * Short worker-side timings; the fallback poll is a long 60 s so that only wake-ups, freed slots
     * and promotions start a claim, and a broken wake-up path shows as a timeout.
     */
    static final WorkerSettings FAST = WorkerSettings.DEFAULTS.toBuilder()
            .workerId(WORKER)
            .pollInterval(Duration.ofSeconds(60))
            .heartbeatInterval(Duration.ofMillis(50))
            .maintenanceInterval(Duration.ofMillis(50))
            .gracePeriod(Duration.ofSeconds(5)).build();

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
        return start(Worker.builder(store, handlers).settings(settings).listener(events));
    }

    /** Starts what {@code builder} was given on the fixture's wake-ups, clock and quick retries; closed after the test. */
    Worker start(Worker.Builder builder) {
        Worker worker = builder.wakeups(wakeups).clock(clock).retryPolicy(QUICK_RETRIES).build();
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
}
