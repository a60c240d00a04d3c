package io.jobq.postgres;

import static io.jobq.postgres.StoreFixtures.Q;
import static io.jobq.postgres.StoreFixtures.TASK;
import static io.jobq.postgres.StoreFixtures.W1;
import static io.jobq.postgres.StoreFixtures.claim;
import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.application.fake.Await;
import io.jobq.application.port.NewJob;
import io.jobq.application.port.NewJobBatch;
import io.jobq.application.port.OutcomeWrite;
import io.jobq.application.port.TenantUpdate;
import io.jobq.domain.fairness.MaxRunning;
import io.jobq.domain.job.Job;
import io.jobq.domain.retry.RetryDecision;
import io.jobq.domain.tenant.TenantId;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * Caps where locks and maintenance meet: an outcome write never waits for a tenant row an application
 * transaction holds, the sweep reaches every tenant with room however many sit at their cap, and a cap
 * change never deadlocks with promotion. Each test failed against the first version of caps.
 */
class CapsLockingAndSweepTest extends PostgresStoreTestCase {
    static final TenantId A = TenantId.of("a");
    static final TenantId B = TenantId.of("b");
    static final TenantId FREE = TenantId.of("free");

    void cap(TenantId tenant, int max) {
        store.configureTenant(TenantUpdate.cap(tenant, Q, Optional.of(MaxRunning.of(max))));
    }

    void enqueue(TenantId tenant, int n) {
        store.enqueueBatch(new NewJobBatch(tenant, Q, TASK, Collections.nCopies(n, "{}"), 5, Duration.ZERO));
    }

    long count(String where) {
        return db.dsl().fetchCount(db.dsl().selectFrom("jobs").where(where));
    }

    /**
     * recordOutcomes releases held jobs right after writing the outcomes. An application transaction that
     * enqueued for the capped tenant through JobClient holds that tenant's row lock until it commits; waiting
     * for it would hang the worker's whole outcome flush (every tenant's outcomes in it, the uncapped one's
     * too), so the release skips a locked row and leaves it to the sweep.
     */
    @Test
    void anOutcomeWriteDoesNotWaitForAnApplicationTransactionHoldingTheCappedTenantsRow() throws Exception {
        cap(A, 1);
        enqueue(A, 2);
        enqueue(FREE, 1);
        List<Job> running = store.claim(claim(W1, 10));
        assertThat(running).hasSize(2);
        try (Connection caller = db.newConnection()) {
            caller.setAutoCommit(false);
            new JobClient().enqueue(caller, NewJob.of(A, Q, TASK, "{}")); // the caller's transaction goes on
            CompletableFuture<?> outcomes = CompletableFuture.supplyAsync(() -> store.recordOutcomes(running.stream()
                    .map(j -> (OutcomeWrite) new OutcomeWrite.Complete(j.fencingToken(), Optional.empty())).toList()));
            try {
                assertThat(outcomes).as("the outcome flush returns while the caller's transaction is open")
                        .succeedsWithin(Duration.ofSeconds(3));
            } finally {
                caller.commit();
                outcomes.join();
            }
        }
        store.promoteDue(100); // the sweep
        assertThat(count("tenant = 'a' AND state = 'queued'")).as("the freed slot is used").isEqualTo(1);
    }

    /**
     * The sweep takes the first {@code limit} capped tenants with held jobs by name, whether or not
     * they have room. Tenants at their cap fill every pass, and a tenant behind them whose run ended without a
     * release (a reaped lease, dead) keeps its held jobs forever. Scaled down: limit 1, two tenants (the same
     * happens with the default 1,000 and 1,001 capped tenants with a backlog).
     */
    @Test
    void theSweepReachesACappedTenantWithRoomBehindTenantsAtTheirCap() {
        cap(A, 1);
        cap(B, 1);
        enqueue(A, 2);
        enqueue(B, 2);
        assertThat(store.claim(claim(W1, 10))).hasSize(2);
        // b's run loses its lease (its worker died) and is reaped dead: no outcome, so no release.
        db.execute("UPDATE jobs SET locked_until = now() - interval '1 second' WHERE tenant = 'b' AND state = 'running'");
        assertThat(store.reapExpiredLeases(100, (attempt, max) -> new RetryDecision.Dead(RetryDecision.Cause.OUT_OF_ATTEMPTS)))
                .isEqualTo(1);
        for (int pass = 0; pass < 5; pass++) store.promoteDue(1);
        assertThat(count("tenant = 'b' AND state = 'queued'")).as("b has room: its held job is released").isEqualTo(1);
        assertThat(count("tenant = 'a' AND state IN ('queued', 'running')")).as("a stays at its cap").isEqualTo(1);
    }

    /** A cap removed by hand (not through the API, which releases at once) strands no held job. */
    @Test
    void heldJobsOfATenantWhoseCapWasRemovedByHandAreReleased() {
        cap(A, 1);
        enqueue(A, 3);
        assertThat(count("tenant = 'a' AND state = 'held'")).isEqualTo(2);
        db.execute("UPDATE tenants SET max_running = NULL WHERE tenant = 'a'");

        store.promoteDue(100);

        assertThat(count("tenant = 'a' AND state = 'held'")).isZero();
        assertThat(count("tenant = 'a' AND state = 'queued'")).isEqualTo(3);
    }

    /**
     * configureTenant locks the tenant row (upsert) and then, in MARK, the tenant's scheduled jobs;
     * promotion locks due scheduled jobs and then their tenants' rows. Opposite orders: a deadlock if
     * promotion waited for the tenant row (as it did until 2026-12-03; PostgreSQL broke it after
     * deadlock_timeout). Made deterministic here: MARK first waits on a queued job another transaction
     * holds, meanwhile promotion takes the due job and finds the tenant row locked: it waits at most
     * {@link LockWait#MAX_MS} ms, below PostgreSQL's deadlock_timeout, and passes the tenant by (promoting
     * nothing), so when the holder commits MARK reaches the due job, and a later pass promotes it under the
     * new cap.
     */
    @Test
    void settingACapNeverDeadlocksWithPromotion() throws Exception {
        store.enqueue(NewJob.of(A, Q, TASK, "{}"));                          // id 1, queued, uncapped
        store.enqueue(NewJob.of(A, Q, TASK, "{}").withDelay(Duration.ofMillis(1))); // id 2, scheduled
        Await.until(Duration.ofSeconds(5), "job 2 due", () -> count("id = 2 AND run_at <= now()") == 1);
        List<String> deadlocks = new CopyOnWriteArrayList<>();
        PostgresJobStore watched = new PostgresJobStore(deadlockRecorder(db.dataSource(), deadlocks));
        try (Connection holder = db.newConnection()) {
            holder.setAutoCommit(false);
            holder.createStatement().execute("SELECT id FROM jobs WHERE id = 1 FOR UPDATE");
            CompletableFuture<?> configure = CompletableFuture.runAsync(() ->
                    watched.configureTenant(TenantUpdate.cap(A, Q, Optional.of(MaxRunning.of(1)))));
            Await.until(Duration.ofSeconds(5), "configure waits in MARK", () -> db.sessionsWaitingOnLocks() == 1);
            assertThat(watched.promoteDue(10)).as("the tenant's row is locked: passed by").isZero();
            holder.commit();
            configure.get(10, java.util.concurrent.TimeUnit.SECONDS);
        }
        Thread.sleep(DuePromotion.REMEMBERED.toMillis()); // passed by just now: left out of the queue's passes that long
        assertThat(watched.promoteDue(10)).as("a later pass promotes the due job, held by the cap").isZero();
        assertThat(deadlocks).as("deadlocks PostgreSQL had to break").isEmpty();
        assertThat(count("capped AND state IN ('queued', 'running')") + count("state = 'held'")).isEqualTo(2);
        assertThat(count("state = 'queued'")).as("the cap holds").isEqualTo(1);
    }

    /** A DataSource whose statements record every deadlock (40P01) they fail with, which run() would hide. */
    static DataSource deadlockRecorder(DataSource real, List<String> deadlocks) {
        return (DataSource) java.lang.reflect.Proxy.newProxyInstance(CapsLockingAndSweepTest.class.getClassLoader(),
                new Class<?>[] {DataSource.class}, (p, m, args) -> {
                    Object r = invoke(m, real, args);
                    return r instanceof Connection c ? recording(Connection.class, c, deadlocks) : r;
                });
    }

    private static Object recording(Class<?> type, Object target, List<String> deadlocks) {
        return java.lang.reflect.Proxy.newProxyInstance(CapsLockingAndSweepTest.class.getClassLoader(), type == Connection.class
                ? new Class<?>[] {Connection.class} : target.getClass().getInterfaces(), (p, m, args) -> {
                    Object r;
                    try {
                        r = invoke(m, target, args);
                    } catch (SQLException e) {
                        if ("40P01".equals(e.getSQLState())) deadlocks.add(e.getMessage());
                        throw e;
                    }
                    if (r instanceof java.sql.Statement s && !(r instanceof java.sql.ResultSet)) {
                        Class<?> iface = r instanceof java.sql.CallableStatement ? java.sql.CallableStatement.class
                                : r instanceof java.sql.PreparedStatement ? java.sql.PreparedStatement.class : java.sql.Statement.class;
                        return java.lang.reflect.Proxy.newProxyInstance(CapsLockingAndSweepTest.class.getClassLoader(),
                                new Class<?>[] {iface}, (p2, m2, a2) -> {
                                    try {
                                        return invoke(m2, s, a2);
                                    } catch (SQLException e) {
                                        if ("40P01".equals(e.getSQLState())) deadlocks.add(e.getMessage());
                                        throw e;
                                    }
                                });
                    }
                    return r;
                });
    }

    private static Object invoke(java.lang.reflect.Method m, Object target, Object[] args) throws Throwable {
        try {
            return m.invoke(target, args);
        } catch (java.lang.reflect.InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
