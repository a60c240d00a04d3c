package io.jobq.postgres;

import static io.jobq.postgres.StoreFixtures.TASK;
import static io.jobq.postgres.StoreFixtures.job;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.jobq.application.port.EnqueueResult;
import io.jobq.application.port.NewJob;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobState;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.tenant.TenantId;
import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * {@link JobClient} enqueues inside the caller's transaction: the job and its wake-up exist if and only
 * if the caller commits. Each test has a plain JDBC connection LISTENing on {@code jobq_wakeup}, as a
 * worker would, and reads what the caller's transaction did from other connections.
 */
@ExtendWith(PostgresDatabaseExtension.class)
class JobClientTest {

    /** How long a test waits to be sure a notification is NOT coming. */
    static final Duration SILENCE = Duration.ofSeconds(1);
    /** How long a test waits for a notification that should come (it normally arrives in milliseconds). */
    static final Duration ARRIVAL = Duration.ofSeconds(10);

    final JobClient client = new JobClient();
    TestDatabase db;
    Connection listener;

    @BeforeEach
    void setUp(TestDatabase db) throws SQLException {
        this.db = db;
        db.emptyTables();
        // the caller's own business table, written in the same transaction as the enqueue
        db.execute("CREATE TABLE IF NOT EXISTS orders (id int PRIMARY KEY)");
        db.execute("TRUNCATE orders");
        listener = db.newConnection();
        try (Statement st = listener.createStatement()) {
            st.execute("LISTEN jobq_wakeup");
        }
    }

    @AfterEach
    void closeListener() throws SQLException {
        listener.close();
    }

    /** The notifications that arrive within {@code wait} (returns as soon as at least one has). */
    List<PGNotification> notifications(Duration wait) throws SQLException {
        PGNotification[] got = listener.unwrap(PGConnection.class).getNotifications((int) wait.toMillis());
        return got == null ? List.of() : List.of(got);
    }

    /** A new connection with a transaction open (auto-commit off), as a caller would hold it. */
    Connection callerTransaction() throws SQLException {
        Connection c = db.newConnection();
        c.setAutoCommit(false);
        return c;
    }

    static void insertOrder(Connection c, int id) throws SQLException {
        try (Statement st = c.createStatement()) {
            st.execute("INSERT INTO orders (id) VALUES (" + id + ")");
        }
    }

    List<Integer> orders() {
        return db.dsl().resultQuery("SELECT id FROM orders ORDER BY id").fetch(r -> r.get(0, Integer.class));
    }

    /** Jobs as seen from another (pooled) connection: only committed rows. */
    List<Long> visibleJobIds() {
        return db.dsl().resultQuery("SELECT id FROM jobs ORDER BY id").fetch(r -> r.get(0, Long.class));
    }

    Optional<Double> lastVtime(String tenant) {
        return db.dsl().resultQuery("SELECT last_vtime FROM tenants WHERE tenant = {0}", tenant).fetchOptional(0, Double.class);
    }

    static void assertWakeup(List<PGNotification> got, String queue) {
        assertThat(got).as("wake-ups").singleElement().satisfies(n -> {
            assertThat(n.getName()).isEqualTo("jobq_wakeup");
            assertThat(n.getParameter()).isEqualTo(queue);
        });
    }

    @Nested
    class Commit {
        @Test
        void theJobAppearsAndListenersAreWokenOnlyWhenTheCallerCommits() throws SQLException {
            try (Connection c = callerTransaction()) {
                insertOrder(c, 1);
                EnqueueResult r = client.enqueue(c, job("acme"));
                assertThat(r).isInstanceOf(EnqueueResult.Created.class);
                assertThat(visibleJobIds()).as("uncommitted: invisible to others").isEmpty();
                assertThat(notifications(Duration.ofMillis(300))).as("uncommitted: no wake-up yet").isEmpty();

                c.commit();

                assertThat(visibleJobIds()).containsExactly(r.job().id().value());
                assertWakeup(notifications(ARRIVAL), "default");
                assertThat(orders()).containsExactly(1);
            }
        }

        @Test
        void theJooqOverloadJoinsTheTransactionOfTheConnectionItIsBoundTo() throws SQLException {
            try (Connection c = callerTransaction()) {
                insertOrder(c, 7);
                Job created = client.enqueue(DSL.using(c, SQLDialect.POSTGRES), job("acme")).job();
                assertThat(visibleJobIds()).as("uncommitted: invisible to others").isEmpty();

                c.commit();

                assertThat(visibleJobIds()).containsExactly(created.id().value());
                assertThat(created.state()).isEqualTo(JobState.QUEUED);
                assertWakeup(notifications(ARRIVAL), "default");
                assertThat(orders()).containsExactly(7);
            }
        }

        /**
         * An enqueue inside an open application transaction holds its tenant's row (its fair tag is charged
         * there) until the caller commits. Promotion passes that tenant by instead of waiting for it: the
         * other tenants' due jobs are promoted at once, and the held tenant's at the next pass after the
         * commit. Waiting would stall the maintenance pass (and so the reaping of dead workers' leases) for
         * as long as any application keeps such a transaction open.
         */
        @Test
        void anEnqueueInAnOpenTransactionStallsNoPromotion() throws Exception {
            PostgresJobStore store = new PostgresJobStore(db.dataSource());
            Job busyLater = store.enqueue(NewJob.of(TenantId.of("busy"), QueueName.DEFAULT, TASK, "{}").withDelay(Duration.ofHours(1))).job();
            Job otherLater = store.enqueue(NewJob.of(TenantId.of("other"), QueueName.DEFAULT, TASK, "{}").withDelay(Duration.ofHours(1))).job();
            db.execute("UPDATE jobs SET run_at = now() - interval '1 second' WHERE state = 'scheduled'");
            try (Connection c = callerTransaction()) {
                client.enqueue(c, NewJob.of(TenantId.of("busy"), QueueName.DEFAULT, TASK, "{}")); // busy's row stays locked
                java.util.concurrent.CompletableFuture<Integer> pass =
                        java.util.concurrent.CompletableFuture.supplyAsync(() -> store.promoteDue(100),
                                work -> Thread.ofVirtual().start(work)); // not the common pool, which other tests' waits may fill
                assertThat(pass.get(5, java.util.concurrent.TimeUnit.SECONDS)).as("promoted the other tenant's job only").isEqualTo(1);
                assertThat(store.get(otherLater.id()).orElseThrow().state()).isEqualTo(JobState.QUEUED);
                assertThat(store.get(busyLater.id()).orElseThrow().state()).as("left for the next pass").isEqualTo(JobState.SCHEDULED);
                c.commit();
            }
            Thread.sleep(DuePromotion.REMEMBERED.toMillis()); // passed by just now: left out of the queue's passes that long
            assertThat(store.promoteDue(100)).isEqualTo(1);
            assertThat(store.get(busyLater.id()).orElseThrow().state()).isEqualTo(JobState.QUEUED);
        }

        /**
         * A tenant enqueueing all the time holds its row most of the time: promotion waits for it a moment
         * rather than pass it over, or the tenant's retries and delayed jobs would stay scheduled for as long as
         * it keeps enqueueing. Passing it over whenever held (the wrong variant) promotes none of them here.
         */
        @Test
        void aTenantWhoseRowIsHeldForAMomentIsWaitedForNotStarved() throws Exception {
            PostgresJobStore store = new PostgresJobStore(db.dataSource());
            assertThat(promotedWhileAnEnqueueHoldsTheRow(store, true, 5_000, 3)).isEqualTo(Map.of("busy", 3L));
            db.emptyTables();
            assertThat(promotedWhileAnEnqueueHoldsTheRow(store, true, 0, 3)).as("never waiting")
                    .doesNotContainKey("busy");
        }

        /**
         * A tenant whose row an open transaction holds and whose due jobs fill the pass's limit holds back no
         * other tenant's due jobs: the pass goes on without it. One pass that skips its row but counts its jobs
         * (the wrong variant) promotes nothing here.
         */
        @Test
        void aHeldTenantWithManyDueJobsHoldsBackNoOtherTenant() throws Exception {
            PostgresJobStore store = new PostgresJobStore(db.dataSource());
            assertThat(promotedWhileAnEnqueueHoldsTheRow(store, false, LockWait.MAX_MS, 3)).isEqualTo(Map.of("other", 1L));
            db.emptyTables();
            assertThat(promotedWhileAnEnqueueHoldsTheRow(store, false, LockWait.MAX_MS, 1)).as("one skipping pass").isEmpty();
        }

        /**
         * A maintainer repeats promotion while passes come back full: a tenant passed by is left out of the
         * next passes for a while, so the same held row is not waited out each time (up to 100 rounds of
         * 100 ms each stalled the maintenance pass). A promotion that forgets it (the wrong variant: a new
         * DuePromotion) waits it out again, and needs its skipping passes again.
         */
        @Test
        void aTenantPassedByIsNotWaitedForAgainAtOnce() throws Exception {
            PostgresJobStore store = new PostgresJobStore(db.dataSource());
            for (int i = 0; i < 3; i++) store.enqueue(NewJob.of(TenantId.of("busy"), QueueName.DEFAULT, TASK, "{}").withDelay(Duration.ofHours(1)));
            store.enqueue(NewJob.of(TenantId.of("other"), QueueName.DEFAULT, TASK, "{}").withDelay(Duration.ofHours(1)));
            db.execute("UPDATE jobs SET run_at = now() - interval '1 minute' + (id - (SELECT min(id) FROM jobs)) * interval '1 second'");
            java.util.concurrent.atomic.AtomicInteger skipping = new java.util.concurrent.atomic.AtomicInteger();
            org.jooq.DSLContext counted = JobqSchema.DEFAULT.dsl(io.jobq.postgres.testing.JdbcProxies.afterEachCall(
                    javax.sql.DataSource.class, db.dataSource(), (m, a, made) -> m.getName().equals("getConnection")
                            ? io.jobq.postgres.testing.JdbcProxies.afterEachCall(Connection.class, (Connection) made, (cm, ca, stmt) -> {
                                // PROMOTE_SKIPPING: the promotion statement, locking tenant rows SKIP LOCKED
                                if (cm.getName().equals("prepareStatement") && ca[0] instanceof String sql
                                        && sql.contains("queue_v") && sql.contains("FOR NO KEY UPDATE SKIP LOCKED")) {
                                    skipping.incrementAndGet();
                                }
                                return stmt;
                            })
                            : made));
            DuePromotion promotion = new DuePromotion();
            try (Connection c = callerTransaction()) {
                client.enqueue(c, NewJob.of(TenantId.of("busy"), QueueName.DEFAULT, TASK, "{}")); // busy's row stays locked
                assertThat(promotion.promote(counted, "default", 3)).as("the other tenant's job").isEqualTo(1);
                assertThat(skipping.getAndSet(0)).as("the wait ran out: skipping passes").isPositive();
                assertThat(promotion.promote(counted, "default", 3)).isZero();
                assertThat(skipping.getAndSet(0)).as("busy left out: no wait ran out").isZero();
                assertThat(new DuePromotion().promote(counted, "default", 3)).isZero();
                assertThat(skipping.get()).as("forgotten: the wait ran out again").isPositive();
                c.rollback();
            }
        }

        /**
         * Tenant "busy" has the queue's 3 oldest due jobs, "other" one due after them; an enqueue of "busy"
         * in an open transaction holds busy's row while {@link DuePromotion} promotes with a limit of 3 (the
         * given variant; waiting for a row up to {@code waitMs}, which the caller makes long where the test must
         * commit within it): until the pass waits for the row ({@code commitOnceWaitedFor}), or else until the
         * pass is over. Returns the due jobs it queued, by tenant.
         */
        private Map<String, Long> promotedWhileAnEnqueueHoldsTheRow(PostgresJobStore store, boolean commitOnceWaitedFor,
                int waitMs, int passes) throws Exception {
            TaskName later = TaskName.of("later");
            for (int i = 0; i < 3; i++) store.enqueue(NewJob.of(TenantId.of("busy"), QueueName.DEFAULT, later, "{}").withDelay(Duration.ofHours(1)));
            store.enqueue(NewJob.of(TenantId.of("other"), QueueName.DEFAULT, later, "{}").withDelay(Duration.ofHours(1)));
            db.execute("UPDATE jobs SET run_at = now() - interval '1 minute' + (id - (SELECT min(id) FROM jobs)) * interval '1 second'");
            try (Connection c = callerTransaction(); Connection looker = db.newConnection()) {
                client.enqueue(c, NewJob.of(TenantId.of("busy"), QueueName.DEFAULT, TASK, "{}")); // busy's row stays locked
                int holder = TestDatabase.backendPid(c);
                java.util.concurrent.CompletableFuture<Integer> pass = java.util.concurrent.CompletableFuture.supplyAsync(
                        () -> new DuePromotion().promote(JobqSchema.DEFAULT.dsl(db.dataSource()), "default", 3, waitMs, passes),
                        work -> Thread.ofVirtual().start(work));
                long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
                while (!pass.isDone() && !(commitOnceWaitedFor && TestDatabase.blocksAnother(looker, holder))) {
                    assertThat(System.nanoTime()).as("the pass neither waited for the row nor ended").isLessThan(deadline);
                    Thread.sleep(2);
                }
                c.commit();
                pass.get(5, java.util.concurrent.TimeUnit.SECONDS);
            }
            return db.dsl().resultQuery("SELECT tenant, count(*) FROM jobs WHERE task = 'later' AND state = 'queued' GROUP BY tenant")
                    .fetchMap(r -> r.get(0, String.class), r -> r.get(1, Long.class));
        }
    }

    @Nested
    class Rollback {
        @Test
        void leavesNoJobNoWakeupAndNoVirtualTimeCharge() throws SQLException {
            new PostgresJobStore(db.dataSource()).enqueue(job("acme"));
            assertWakeup(notifications(ARRIVAL), "default");
            double before = lastVtime("acme").orElseThrow();

            try (Connection c = callerTransaction()) {
                insertOrder(c, 1);
                assertThat(client.enqueue(c, job("acme"))).isInstanceOf(EnqueueResult.Created.class);
                c.rollback();
            }

            assertThat(visibleJobIds()).as("only the earlier job").hasSize(1);
            assertThat(notifications(SILENCE)).as("wake-ups after a rollback").isEmpty();
            assertThat(lastVtime("acme")).contains(before);
            assertThat(orders()).isEmpty();
            // the listener was live all along: a committed enqueue is heard
            new PostgresJobStore(db.dataSource()).enqueue(job("acme"));
            assertWakeup(notifications(ARRIVAL), "default");
        }

        @Test
        void throughTheJooqOverloadAFailedCallerTransactionTakesTheJobWithIt() throws SQLException {
            assertThatThrownBy(() -> db.dsl().transaction(cfg -> {
                client.enqueue(cfg.dsl(), job("newcomer"));
                throw new IllegalStateException("the caller's own work failed");
            })).isInstanceOf(IllegalStateException.class);

            assertThat(visibleJobIds()).isEmpty();
            assertThat(lastVtime("newcomer")).as("not even the tenant row remains").isEmpty();
            assertThat(notifications(SILENCE)).isEmpty();
        }
    }

    @Nested
    class IdempotencyKeys {
        @Test
        void aKeyCommittedEarlierReturnsTheExistingJobAndKeepsTheCallersOtherWork() throws SQLException {
            Job original = client.enqueue(db.dsl(), job("acme").withIdempotencyKey("order-42")).job();
            notifications(ARRIVAL);
            double charged = lastVtime("acme").orElseThrow();

            try (Connection c = callerTransaction()) {
                insertOrder(c, 1);
                EnqueueResult again = client.enqueue(c, job("acme", "{\"retry\": true}").withIdempotencyKey("order-42"));
                insertOrder(c, 2);
                c.commit();

                assertThat(again).isInstanceOf(EnqueueResult.Existing.class);
                assertThat(again.job()).isEqualTo(original);
            }

            assertThat(orders()).as("the caller's writes before and after the repeat both committed").containsExactly(1, 2);
            assertThat(visibleJobIds()).containsExactly(original.id().value());
            assertThat(lastVtime("acme")).as("the repeat's charge was rolled back to the savepoint").contains(charged);
            assertThat(notifications(SILENCE)).as("nothing new to wake anyone for").isEmpty();
        }

        @Test
        void aKeyRepeatedWithinOneTransactionCreatesOneJobAndChargesOnce() throws SQLException {
            try (Connection c = callerTransaction()) {
                EnqueueResult first = client.enqueue(c, job("acme").withIdempotencyKey("k"));
                insertOrder(c, 1);
                EnqueueResult second = client.enqueue(c, job("acme").withIdempotencyKey("k"));
                insertOrder(c, 2);
                c.commit();

                assertThat(first).isInstanceOf(EnqueueResult.Created.class);
                assertThat(second).isInstanceOf(EnqueueResult.Existing.class);
                assertThat(second.job().id()).isEqualTo(first.job().id());
            }

            assertThat(visibleJobIds()).hasSize(1);
            assertThat(orders()).containsExactly(1, 2);
            // a new tenant in an empty queue: one job charges 0 + 1/1
            assertThat(lastVtime("acme")).contains(1.0);
            assertWakeup(notifications(ARRIVAL), "default");
        }
    }

    @Nested
    class AutoCommit {
        @Test
        void onAnAutoCommitConnectionTheEnqueueIsItsOwnTransaction() throws SQLException {
            try (Connection c = db.newConnection()) {
                assertThat(c.getAutoCommit()).isTrue();
                EnqueueResult first = client.enqueue(c, job("acme").withIdempotencyKey("k"));

                assertThat(visibleJobIds()).containsExactly(first.job().id().value());
                assertWakeup(notifications(ARRIVAL), "default");
                assertThat(c.getAutoCommit()).as("the connection is left as it was").isTrue();

                EnqueueResult again = client.enqueue(c, job("acme").withIdempotencyKey("k"));
                assertThat(again).isInstanceOf(EnqueueResult.Existing.class);
                assertThat(again.job().id()).isEqualTo(first.job().id());
                assertThat(lastVtime("acme")).contains(1.0);
            }
        }
    }

    @Nested
    class WakeupPayload {
        @Test
        void theWakeupNamesOnlyTheQueueEvenForAMegabytePayload() throws SQLException {
            String blob = "x".repeat(1_000_000 - "{\"blob\":\"\"}".length());
            String payload = "{\"blob\":\"" + blob + "\"}";
            assertThat(payload.getBytes(StandardCharsets.UTF_8)).hasSize(1_000_000);
            QueueName reports = QueueName.of("reports");

            try (Connection c = callerTransaction()) {
                client.enqueue(c, NewJob.of(TenantId.of("acme"), reports, TASK, payload));
                c.commit();
            }

            List<PGNotification> got = notifications(ARRIVAL);
            assertWakeup(got, "reports");
            assertThat(got.getFirst().getParameter().getBytes(StandardCharsets.UTF_8).length).isLessThan(100);
            assertThat(db.dsl().resultQuery("SELECT octet_length(payload->>'blob') FROM jobs").fetchSingle(0, Integer.class))
                    .as("the payload itself was stored whole").isEqualTo(blob.length());
        }
    }

    /** Cancel through the caller's transaction: it lands with the commit and goes with a rollback. */
    @Nested
    class Cancel {
        @Test
        void aCancelCommitsWithTheCallersWorkAndARollbackUndoesIt() throws SQLException {
            PostgresJobStore store = new PostgresJobStore(db.dataSource());
            Job queued = store.enqueue(job("acme")).job();
            try (Connection c = callerTransaction()) {
                insertOrder(c, 1);
                assertThat(client.cancel(c, queued.id())).isInstanceOf(io.jobq.application.port.CancelResult.Cancelled.class);
                assertThat(store.get(queued.id()).orElseThrow().state()).as("not before the commit").isEqualTo(JobState.QUEUED);
                assertThat(store.claim(new io.jobq.application.port.ClaimRequest(List.of(QueueName.DEFAULT),
                        io.jobq.domain.lease.WorkerId.of("w"), 1, Duration.ofSeconds(30))))
                        .as("its row is locked: a claim skips it meanwhile").isEmpty();
                c.rollback();
            }
            assertThat(store.get(queued.id()).orElseThrow().state()).as("rolled back").isEqualTo(JobState.QUEUED);

            try (Connection c = callerTransaction()) {
                insertOrder(c, 2);
                client.cancel(c, queued.id());
                c.commit();
            }
            assertThat(store.get(queued.id()).orElseThrow().state()).isEqualTo(JobState.CANCELLED);
            assertThat(orders()).containsExactly(2);
        }

        /**
         * A cancel inside an open application transaction holds the job's row: a priority enqueue of the same
         * tenant (which reorders its queued jobs) and the maintenance sweep (which releases held jobs) pass
         * the row by instead of waiting for it, so neither stalls nor deadlocks with the caller's next write.
         */
        @Test
        void aCancelInAnOpenTransactionStallsNoPriorityEnqueueAndNoSweep() throws Exception {
            PostgresJobStore store = new PostgresJobStore(db.dataSource());
            TenantId t = TenantId.of("t");
            Job pending = store.enqueue(NewJob.of(t, QueueName.DEFAULT, TASK, "{}")).job();
            try (Connection c = callerTransaction()) {
                client.cancel(c, pending.id()); // "replace the pending job": cancel it, then enqueue its replacement
                java.util.concurrent.CompletableFuture<?> urgent = java.util.concurrent.CompletableFuture.runAsync(
                        () -> store.enqueue(NewJob.of(t, QueueName.DEFAULT, TASK, "{}").withPriority(5)));
                urgent.get(5, java.util.concurrent.TimeUnit.SECONDS);
                client.enqueue(c, NewJob.of(t, QueueName.DEFAULT, TASK, "{}"));
                c.commit();
            }

            store.configureTenant(io.jobq.application.port.TenantUpdate.cap(TenantId.of("capped"), QueueName.DEFAULT,
                    Optional.of(io.jobq.domain.fairness.MaxRunning.of(1))));
            Job first = store.enqueue(NewJob.of(TenantId.of("capped"), QueueName.DEFAULT, TASK, "{}")).job();
            Job held = store.enqueue(NewJob.of(TenantId.of("capped"), QueueName.DEFAULT, TASK, "{}")).job();
            Job next = store.enqueue(NewJob.of(TenantId.of("capped"), QueueName.DEFAULT, TASK, "{}")).job();
            try (Connection c = callerTransaction()) {
                client.cancel(c, held.id()); // stays locked while c is open
                try (Connection other = db.newConnection()) {
                    client.cancel(other, first.id()); // frees the cap's slot; the client leaves the release to the sweep
                }
                java.util.concurrent.CompletableFuture<Integer> sweep =
                        java.util.concurrent.CompletableFuture.supplyAsync(() -> store.promoteDue(100));
                assertThat(sweep.get(5, java.util.concurrent.TimeUnit.SECONDS)).as("released the next held job").isEqualTo(1);
                c.rollback();
            }
            assertThat(store.get(next.id()).orElseThrow().state()).isEqualTo(JobState.QUEUED);
        }

        /**
         * A cancel of a running job inside an open application transaction holds the job's row. The worker's
         * heartbeat, one statement for all its runs, must not wait for it: the other runs' leases are
         * extended at once, the held run is neither extended nor reported lost, and the next heartbeat after
         * the commit extends it. Waiting would let every other run's lease lapse behind one open transaction.
         */
        @Test
        void aCancelInAnOpenTransactionHoldsBackNoHeartbeat() throws Exception {
            PostgresJobStore store = new PostgresJobStore(db.dataSource());
            store.enqueue(job("acme"));
            store.enqueue(job("acme"));
            List<Job> runs = store.claim(new io.jobq.application.port.ClaimRequest(List.of(QueueName.DEFAULT),
                    io.jobq.domain.lease.WorkerId.of("w"), 2, Duration.ofSeconds(30)));
            List<io.jobq.domain.lease.FencingToken> tokens = runs.stream().map(Job::fencingToken).toList();
            Job cancelled = runs.get(0);
            Job other = runs.get(1);
            db.execute("UPDATE jobs SET locked_until = now() + interval '1 second'"); // so an extension shows
            try (Connection c = callerTransaction()) {
                client.cancel(c, cancelled.id()); // asks the running job to stop; its row stays locked
                java.util.concurrent.CompletableFuture<java.util.Set<io.jobq.domain.lease.FencingToken>> beat =
                        java.util.concurrent.CompletableFuture.supplyAsync(() -> store.heartbeat(tokens, Duration.ofMinutes(5)),
                                work -> Thread.ofVirtual().start(work));
                assertThat(beat.get(5, java.util.concurrent.TimeUnit.SECONDS)).as("nothing lost").isEmpty();
                assertThat(leaseLeftSeconds(other)).as("the other run extended").isGreaterThan(60);
                assertThat(leaseLeftSeconds(cancelled)).as("the held run not (yet)").isLessThan(60);
                c.commit();
            }
            assertThat(store.heartbeat(tokens, Duration.ofMinutes(5))).isEmpty();
            assertThat(leaseLeftSeconds(cancelled)).as("extended by the next heartbeat").isGreaterThan(60);
            assertThat(store.get(cancelled.id()).orElseThrow().cancelRequested()).isTrue();
        }

        /** A held row whose lease already ran out is lost, not held: a reaper may be taking it at this moment. */
        @Test
        void aHeldRunWhoseLeaseRanOutIsReportedLost() throws Exception {
            PostgresJobStore store = new PostgresJobStore(db.dataSource());
            store.enqueue(job("acme"));
            Job run = store.claim(new io.jobq.application.port.ClaimRequest(List.of(QueueName.DEFAULT),
                    io.jobq.domain.lease.WorkerId.of("w"), 1, Duration.ofSeconds(30))).getFirst();
            db.execute("UPDATE jobs SET locked_until = now() - interval '1 second'");
            try (Connection c = callerTransaction()) {
                client.cancel(c, run.id());
                java.util.concurrent.CompletableFuture<java.util.Set<io.jobq.domain.lease.FencingToken>> beat =
                        java.util.concurrent.CompletableFuture.supplyAsync(() -> store.heartbeat(List.of(run.fencingToken()),
                                Duration.ofMinutes(5)), work -> Thread.ofVirtual().start(work));
                assertThat(beat.get(5, java.util.concurrent.TimeUnit.SECONDS)).containsExactly(run.fencingToken());
                c.rollback();
            }
        }

        private long leaseLeftSeconds(Job j) {
            return db.dsl().resultQuery("SELECT extract(epoch FROM locked_until - now())::bigint FROM jobs WHERE id = {0}",
                    j.id().value()).fetchSingle(0, Long.class);
        }

        @Test
        void aRunningJobIsAskedAndAFinishedOneIsLeftAlone() throws SQLException {
            PostgresJobStore store = new PostgresJobStore(db.dataSource());
            Job job = store.enqueue(job("acme")).job();
            store.claim(new io.jobq.application.port.ClaimRequest(List.of(QueueName.DEFAULT), io.jobq.domain.lease.WorkerId.of("w"), 1,
                    Duration.ofSeconds(30)));
            try (Connection c = db.newConnection()) { // auto-commit: the cancel is its own transaction
                assertThat(client.cancel(c, job.id())).isInstanceOf(io.jobq.application.port.CancelResult.Requested.class);
                assertThat(client.cancel(c, io.jobq.domain.job.JobId.of(999_999)))
                        .isInstanceOf(io.jobq.application.port.CancelResult.NotFound.class);
            }
            assertThat(store.get(job.id()).orElseThrow().cancelRequested()).isTrue();
        }
    }
}
