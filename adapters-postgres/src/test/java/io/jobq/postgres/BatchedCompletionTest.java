package io.jobq.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.application.fake.Await;
import io.jobq.application.port.CancelResult;
import io.jobq.application.port.FencedWrite;
import io.jobq.application.port.NewJobBatch;
import io.jobq.application.port.ClaimRequest;
import io.jobq.application.port.OutcomeWrite;
import io.jobq.application.port.OutcomesThenClaim;
import io.jobq.application.port.StoreUnavailableException;
import io.jobq.application.worker.HandlerRegistry;
import io.jobq.application.worker.Worker;
import io.jobq.application.worker.WorkerSettings;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.retry.BackoffPolicy;
import io.jobq.domain.retry.RetryPolicy;
import io.jobq.domain.tenant.TenantId;
import io.jobq.postgres.testing.ForwardingJobStore;
import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import java.io.IOException;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Batched completion on a real server (issue 14): a busy worker commits many runs' outcomes per statement,
 * an outage while outcomes are flushed loses no job, closing the worker writes every outcome it was
 * handed, and a row an application's transaction holds holds back no other outcome. The store is the real one, observed through a decorator that counts (and can fail) its
 * {@code recordOutcomes} calls.
 */
@ExtendWith(PostgresDatabaseExtension.class)
class BatchedCompletionTest {
    static final Duration SETTLED = Duration.ofSeconds(60);
    static final QueueName Q = QueueName.DEFAULT;
    static final RetryPolicy TINY_BACKOFF = new RetryPolicy(BackoffPolicy.of(Duration.ofMillis(1), Duration.ofMillis(20)));
    static final WorkerSettings BUSY = WorkerSettings.builder()
            .concurrency(16).claimBatchSize(16).listen(false).pollInterval(Duration.ofMillis(20))
            .lease(Duration.ofSeconds(1)).maintenanceInterval(Duration.ofMillis(100)).gracePeriod(Duration.ofSeconds(10))
            .build();

    /**
     * The real store; counts outcome statements, the outcomes in them and those answered held (written again:
     * the worker's own heartbeat holds a row a moment now and then), and fails them while {@link #down}.
     */
    static final class ObservedStore extends ForwardingJobStore {
        final AtomicInteger statements = new AtomicInteger();
        final AtomicInteger outcomes = new AtomicInteger();
        final AtomicInteger held = new AtomicInteger();
        volatile boolean down;

        ObservedStore(PostgresJobStore real) {
            super(real);
        }

        @Override
        public List<FencedWrite> recordOutcomes(List<OutcomeWrite> writes) {
            if (down) throw new StoreUnavailableException("record outcomes", new IOException("simulated outage"));
            statements.incrementAndGet();
            outcomes.addAndGet(writes.size());
            return countHeld(super.recordOutcomes(writes));
        }

        /** The claim loop's statement: counted as an outcome statement when it carries outcomes. */
        @Override
        public OutcomesThenClaim recordOutcomesThenClaim(List<OutcomeWrite> writes, ClaimRequest req) {
            if (writes.isEmpty()) return super.recordOutcomesThenClaim(writes, req);
            if (down) throw new StoreUnavailableException("record outcomes and claim", new IOException("simulated outage"));
            statements.incrementAndGet();
            outcomes.addAndGet(writes.size());
            OutcomesThenClaim both = super.recordOutcomesThenClaim(writes, req);
            countHeld(both.answers());
            return both;
        }

        private List<FencedWrite> countHeld(List<FencedWrite> answers) {
            held.addAndGet((int) answers.stream().filter(a -> a instanceof FencedWrite.Held).count());
            return answers;
        }
    }

    TestDatabase db;
    ObservedStore store;
    final List<Worker> workers = new ArrayList<>();

    @BeforeEach
    void setUp(TestDatabase db) {
        this.db = db;
        db.emptyTables();
        store = new ObservedStore(new PostgresJobStore(db.dataSource()));
    }

    @AfterEach
    void tearDown() {
        workers.forEach(Worker::close);
    }

    Worker start(WorkerSettings settings) {
        Worker w = Worker.builder(store, HandlerRegistry.withBuiltIns()).settings(settings).retryPolicy(TINY_BACKOFF).build();
        workers.add(w);
        w.start();
        return w;
    }

    void enqueue(int n, String task, String payload) {
        for (int from = 0; from < n; from += 1000) {
            List<String> payloads = Collections.nCopies(Math.min(1000, n - from), payload);
            store.enqueueBatch(new NewJobBatch(TenantId.of("acme"), Q, TaskName.of(task), payloads, 10, Duration.ZERO));
        }
    }

    Map<String, Long> states() {
        return db.dsl().resultQuery("SELECT state, count(*) FROM jobs GROUP BY state").fetchMap(r -> r.get(0, String.class),
                r -> r.get(1, Long.class));
    }

    long done() {
        return states().getOrDefault("done", 0L);
    }

    @Test
    void aBusyWorkerCommitsManyOutcomesPerStatementWhereOneAtATimeCommitsEach() {
        int jobs = 600;
        enqueue(jobs, "sleep", "{\"ms\": 5}");
        Worker batching = start(BUSY);
        Await.until(SETTLED, "all done with batching", () -> done() == jobs);
        batching.close();
        int batched = store.statements.get();
        assertThat(store.outcomes.get() - store.held.get()).isEqualTo(jobs);
        assertThat(batched).as("outcome statements for %d jobs", jobs).isLessThanOrEqualTo(jobs / 3);

        // the same scenario, one outcome per statement
        db.emptyTables();
        store.statements.set(0);
        store.held.set(0);
        enqueue(jobs, "sleep", "{\"ms\": 5}");
        start(BUSY.toBuilder().outcomeBatchSize(1).build());
        Await.until(SETTLED, "all done one at a time", () -> done() == jobs);
        assertThat(store.statements.get() - store.held.get()).as("one per outcome, and one per held one written again").isEqualTo(jobs);
    }

    @Test
    void anOutageWhileOutcomesAreFlushedLosesNoJob() throws Exception {
        int jobs = 200;
        enqueue(jobs, "sleep", "{\"ms\": 20}");
        store.down = true; // every outcome write fails: runs are let go, and their leases (1 s) lapse
        start(BUSY);
        Await.until(SETTLED, "runs that could not record their outcome", () -> store.outcomes.get() == 0
                && states().getOrDefault("running", 0L) > 0 && db.dsl().fetchCount(db.dsl().selectFrom("jobs")
                        .where("attempts > 0")) >= 16);
        Thread.sleep(1500);
        store.down = false;

        Await.until(SETTLED, "every job done after the outage", () -> done() == jobs);
        assertThat(states()).containsOnlyKeys("done");
        assertThat(db.dsl().resultQuery("SELECT max(attempts) FROM jobs").fetchSingle(0, Integer.class))
                .as("runs whose outcome was lost ran again").isGreaterThan(1);
    }

    @Test
    void closingTheWorkerWritesEveryOutcomeItWasHanded() {
        int jobs = 64;
        enqueue(jobs, "sleep", "{\"ms\": 200}");
        Worker w = start(BUSY.toBuilder().batchFillWait(Duration.ofMillis(50)).build());
        // Started, not only claimed: close() gives jobs claimed but not yet started back to the queue.
        Await.until(SETTLED, "a full set of runs in hand", () -> states().getOrDefault("running", 0L) == 16
                && w.inHandCount() == 16);

        w.close();

        Map<String, Long> after = states();
        assertThat(after.getOrDefault("running", 0L)).as("no run left to its lease after a graceful close").isZero();
        assertThat(after.get("done")).isGreaterThanOrEqualTo(16);
        assertThat(after.get("done") + after.getOrDefault("queued", 0L)).isEqualTo(jobs);
    }

    /**
     * A run whose row an application's open transaction holds (it cancels the job) holds back no other run's
     * outcome, even in the same statement, and its own is written once that transaction ends: no attempt is
     * lost or run again. Both handlers return together and the claim loop waits up to 1 s to fill its batch,
     * so the two outcomes share one statement: one that waited for the held row (the wrong variant) would
     * hold the other back with it.
     */
    @Test
    void aRowHeldByAnOpenCancelHoldsBackNoOtherOutcomeAndLandsOnceItEnds() throws Exception {
        java.util.concurrent.CountDownLatch started = new java.util.concurrent.CountDownLatch(2);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        HandlerRegistry gated = HandlerRegistry.withBuiltIns().register("gated", ctx -> {
            started.countDown();
            release.await();
            return java.util.Optional.empty();
        });
        enqueue(2, "gated", "{}");
        Worker w = Worker.builder(store, gated).retryPolicy(TINY_BACKOFF).settings(BUSY.toBuilder().concurrency(2).claimBatchSize(2)
                .lease(Duration.ofSeconds(10)).batchFillWait(Duration.ofSeconds(1)).build()).build();
        workers.add(w);
        w.start();
        assertThat(started.await(30, java.util.concurrent.TimeUnit.SECONDS)).as("both handlers running").isTrue();
        long heldId = db.dsl().resultQuery("SELECT min(id) FROM jobs").fetchSingle(0, Long.class);
        try (Connection app = db.newConnection()) {
            app.setAutoCommit(false);
            assertThat(new JobClient().cancel(app, JobId.of(heldId))).isInstanceOf(CancelResult.Requested.class);
            release.countDown();
            Await.until(Duration.ofSeconds(10), "the other run done while the row is held", () -> done() == 1);
            Thread.sleep(300);
            assertThat(stateOf(heldId)).as("the held run's outcome waits for the row").isEqualTo("running");
            app.commit();
        }
        Await.until(Duration.ofSeconds(10), "the held run's outcome written once the cancel committed", () -> done() == 2);
        assertThat(db.dsl().resultQuery("SELECT max(attempts) FROM jobs").fetchSingle(0, Integer.class)).isEqualTo(1);
    }

    String stateOf(long id) {
        return db.dsl().resultQuery("SELECT state FROM jobs WHERE id = {0}", id).fetchSingle(0, String.class);
    }
}
