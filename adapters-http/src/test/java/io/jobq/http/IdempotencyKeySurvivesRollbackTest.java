package io.jobq.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.application.fake.Await;
import io.jobq.application.port.EnqueueResult;
import io.jobq.application.port.NewJob;
import io.jobq.application.worker.HandlerRegistry;
import io.jobq.application.worker.Worker;
import io.jobq.application.worker.WorkerSettings;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.tenant.TenantId;
import io.jobq.postgres.ConcurrentUpdateException;
import io.jobq.postgres.JobClient;
import io.jobq.postgres.PostgresWakeupChannel;
import io.jobq.postgres.testing.TestDatabase;
import java.sql.Connection;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Robustness case R13: idempotency when the first inserter rolls back. Transaction A (the transactional Java client)
 * enqueues (t1, k2) and rolls back after 500 ms; 100 ms after A's insert, request B (HTTP) enqueues the
 * same key: B waits for A's outcome, then gets 201 with a committed job that exists and runs once. At
 * REPEATABLE READ a caller that cannot see a competitor's committed row gets the existing job or
 * {@link ConcurrentUpdateException} — never a null id, a 500, or an "ok" with no job.
 */
class IdempotencyKeySurvivesRollbackTest extends ApiTestCase {
    static final TenantId T1 = TenantId.of("t1");
    static final TaskName COUNT = TaskName.of("count");

    Worker worker;
    final Map<Long, AtomicInteger> runs = new ConcurrentHashMap<>();

    @BeforeAll
    void startWorker(TestDatabase db) {
        HandlerRegistry handlers = HandlerRegistry.withBuiltIns().register(COUNT, ctx -> {
            runs.computeIfAbsent(ctx.jobId().value(), k -> new AtomicInteger()).incrementAndGet();
            return Optional.empty();
        });
        worker = Worker.builder(f.store(), handlers).wakeups(new PostgresWakeupChannel(db.jdbcUrl(), db.dataSource()))
                .settings(WorkerSettings.builder().lease(Duration.ofSeconds(2)).maintenanceInterval(Duration.ofMillis(500)).build())
                .build();
        worker.start();
    }

    @AfterAll
    void stopWorker() {
        worker.close();
    }

    @BeforeEach
    void forgetRuns() {
        runs.clear();
    }

    static NewJob job(String key) {
        return NewJob.of(T1, QueueName.DEFAULT, COUNT, "{}").withIdempotencyKey(key);
    }

    @Test
    void aRequestRacingARolledBackInsertWaitsThenCreatesAJobThatRunsOnce() throws Exception {
        CountDownLatch inserted = new CountDownLatch(1);
        long[] rolledBackAt = new long[1];
        CompletableFuture<EnqueueResult> a = CompletableFuture.supplyAsync(() -> {
            try (Connection c = f.db().newConnection()) {
                c.setAutoCommit(false);
                EnqueueResult r = new JobClient().enqueue(c, job("k2"));
                inserted.countDown();
                Thread.sleep(500); // prescribed: A rolls back 500 ms after its insert
                rolledBackAt[0] = System.nanoTime();
                c.rollback();
                return r;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        assertThat(inserted.await(10, TimeUnit.SECONDS)).isTrue();
        Thread.sleep(100); // prescribed: B comes 100 ms after A's insert
        ApiClient.Reply b = f.client().post("/jobs", "{\"task\": \"count\", \"tenant\": \"t1\", \"idempotency_key\": \"k2\"}");
        long answeredAt = System.nanoTime();

        assertThat(a.get(10, TimeUnit.SECONDS)).isInstanceOf(EnqueueResult.Created.class);
        assertThat(answeredAt).as("B answered only after A's rollback").isGreaterThanOrEqualTo(rolledBackAt[0]);
        assertThat(b.status()).as(b.toString()).isEqualTo(201);
        long id = b.json().get("id").asLong();
        assertThat(id).isPositive();
        assertThat(f.client().get("/jobs/" + id).status()).as("B's job exists, committed").isEqualTo(200);
        Await.until(Duration.ofSeconds(10), "B's job done",
                () -> "done".equals(f.client().get("/jobs/" + id).json().get("status").asText()));
        assertThat(f.count("idempotency_key = 'k2'")).isEqualTo(1);
        assertThat(runs).containsOnlyKeys(id);
        assertThat(runs.get(id).get()).as("handler runs").isEqualTo(1);
        // A repeat now gets the same job, 200.
        ApiClient.Reply again = f.client().post("/jobs", "{\"task\": \"count\", \"tenant\": \"t1\", \"idempotency_key\": \"k2\"}");
        assertThat(again.status()).isEqualTo(200);
        assertThat(again.json().get("id").asLong()).isEqualTo(id);
    }

    /** The competitor committed after the caller's snapshot was taken: the caller's snapshot cannot see its row. */
    @Test
    void atRepeatableReadAnInvisibleCommittedCompetitorGivesTheJobOrARetryableError() throws Exception {
        JobId competitor;
        try (Connection c = f.db().newConnection()) {
            c.setAutoCommit(false);
            c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
            try (var st = c.createStatement()) {
                st.execute("SELECT count(*) FROM jobs"); // the snapshot is taken here
            }
            competitor = f.store().enqueue(job("k3")).job().id(); // commits
            Object outcome = outcome(() -> new JobClient().enqueue(c, job("k3")));
            assertAcceptable(outcome, competitor);
            c.rollback();
        }
        assertThat(f.count("idempotency_key = 'k3'")).isEqualTo(1);
    }

    /** The competitor is still open when the caller inserts: the caller waits, then the competitor commits. */
    @Test
    void atRepeatableReadAWaitedForCompetitorThatCommitsGivesTheJobOrARetryableError() throws Exception {
        try (Connection d = f.db().newConnection(); Connection c = f.db().newConnection()) {
            d.setAutoCommit(false);
            JobId competitor = new JobClient().enqueue(d, job("k4")).job().id();
            c.setAutoCommit(false);
            c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
            CompletableFuture<Object> caller = CompletableFuture.supplyAsync(() -> outcome(() -> new JobClient().enqueue(c, job("k4"))));
            Await.until(Duration.ofSeconds(10), "the caller waits on the competitor's key", () -> f.db().dsl().resultQuery(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")
                    .fetchSingle(0, Integer.class) > 0);
            d.commit();
            assertAcceptable(caller.get(10, TimeUnit.SECONDS), competitor);
            c.rollback();
        }
        assertThat(f.count("idempotency_key = 'k4'")).isEqualTo(1);
    }

    private static Object outcome(java.util.function.Supplier<EnqueueResult> call) {
        try {
            return call.get();
        } catch (RuntimeException e) {
            return e;
        }
    }

    private static void assertAcceptable(Object outcome, JobId competitor) {
        if (outcome instanceof EnqueueResult r) {
            assertThat(r).as("not a new job").isInstanceOf(EnqueueResult.Existing.class);
            assertThat(r.job()).isNotNull();
            assertThat(r.job().id()).isEqualTo(competitor);
        } else {
            assertThat(outcome).as("a clear retryable error").isInstanceOf(ConcurrentUpdateException.class);
            assertThat(((Exception) outcome).getMessage()).contains("retry");
        }
    }
}
