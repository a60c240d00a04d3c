package io.jobq.postgres;

import static io.jobq.application.fake.Json.json;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import com.fasterxml.jackson.databind.JsonNode;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.jobq.application.fake.Await;
import io.jobq.application.fake.Json;
import io.jobq.application.port.ClaimRequest;
import io.jobq.application.port.OutcomeWrite;
import io.jobq.application.port.OutcomesThenClaim;
import io.jobq.application.port.JobStore;
import io.jobq.application.port.NewJob;
import io.jobq.application.port.NewJobBatch;
import io.jobq.application.worker.BuiltInHandlers;
import io.jobq.application.worker.DiscardReason;
import io.jobq.application.worker.HandlerRegistry;
import io.jobq.application.worker.HandlerSettings;
import io.jobq.application.worker.JobContext;
import io.jobq.application.worker.JobHandler;
import io.jobq.application.worker.PermanentJobFailure;
import io.jobq.application.worker.Worker;
import io.jobq.application.worker.WorkerListener;
import io.jobq.application.worker.WorkerSettings;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.JobState;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.lease.FencingToken;
import io.jobq.domain.lease.WorkerId;
import io.jobq.domain.retry.BackoffPolicy;
import io.jobq.domain.retry.RetryPolicy;
import io.jobq.domain.tenant.TenantId;
import io.jobq.postgres.testing.ForwardingJobStore;
import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import java.util.stream.IntStream;
import javax.sql.DataSource;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The real {@link Worker} on the real {@link PostgresJobStore} and {@link PostgresWakeupChannel}: no
 * fakes below the worker. The tests share the class's database, so each one serves a queue of its own
 * ({@code it-<n>}) and cannot see another's jobs or wake-ups.
 *
 * <p>The fallback poll is a long 60 s throughout, so a broken wake-up path shows as a timeout rather
 * than as a slow pass. Leases, backoff and maintenance are short so recovery and retries happen within
 * a second or two. Every wait is a bounded poll for a condition ({@link Await}); none is a bare sleep.
 */
@ExtendWith(PostgresDatabaseExtension.class)
class WorkerIntegrationTest {
    /** Upper bound for things that should happen "soon"; generous so a loaded 2-core machine passes. */
    static final Duration SOON = Duration.ofSeconds(10);
    static final TenantId TENANT = TenantId.of("acme");
    static final AtomicInteger QUEUES = new AtomicInteger();

    /** Retries due 0..1 ms after a first failure, at most 20 ms later: backoff never slows a test. */
    static final RetryPolicy TINY_BACKOFF = new RetryPolicy(BackoffPolicy.of(Duration.ofMillis(1), Duration.ofMillis(20)));

    /**
     * The listener's connection check (a {@code SELECT 1} after 60 s of quiet) is pushed past any test,
     * so the LISTEN backend's {@code pg_stat_activity.query} still reads {@code LISTEN …} when a test
     * looks for it to kill it.
     */
    static final PostgresWakeupChannel.Options LISTEN_OPTIONS =
            new PostgresWakeupChannel.Options(Duration.ofMillis(250), Duration.ofSeconds(60), Duration.ofSeconds(1));

    /** Poll 60 s (wake-ups only), lease 5 s (heartbeat every 1.67 s), maintenance every 100 ms, grace 5 s. */
    static final WorkerSettings SHORT = WorkerSettings.builder()
            .pollInterval(Duration.ofSeconds(60))
            .lease(Duration.ofSeconds(5))
            .maintenanceInterval(Duration.ofMillis(100))
            .gracePeriod(Duration.ofSeconds(5))
            .build();

    TestDatabase db;
    PostgresJobStore store;
    QueueName queue;
    Probe probe;
    HandlerRegistry handlers;
    final List<Worker> workers = new ArrayList<>();
    final List<HikariDataSource> pools = new ArrayList<>();

    @BeforeEach
    void setUp(TestDatabase db) {
        this.db = db;
        store = new PostgresJobStore(db.dataSource(), PostgresJobStore.Options.DEFAULTS);
        queue = QueueName.of("it-" + QUEUES.incrementAndGet());
        probe = new Probe();
        handlers = HandlerRegistry.withBuiltIns().register("probe", probe);
    }

    @AfterEach
    void tearDown() {
        workers.forEach(Worker::close);
        pools.forEach(HikariDataSource::close);
    }

    // ---------------------------------------------------------------------------------------------

    @Nested
    class WakeUps {

        @Test
        void aNotificationWakesAnIdleWorkerWithinOneSecondOfTheEnqueue() {
            WatchedStore watched = new WatchedStore(store);
            Started w = start(watched, SHORT);
            awaitIdleAndListening(w, watched, 2);

            JobId id = enqueue("probe", "{\"ms\": 0}");
            long enqueued = System.nanoTime();

            Duration latency = awaitFirstStart(id, enqueued);
            // Only a wake-up can start it well inside the 60 s poll; 10 s leaves room for a loaded machine.
            assertThat(latency).as("from the enqueue's return to the handler's start (fallback poll is 60 s)")
                    .isLessThan(SOON);
            assertThat(awaitState(id, JobState.DONE).attempts()).isEqualTo(1);
        }

        @Test
        void afterItsListenBackendIsKilledTheWorkerReconnectsAndIsStillWoken() {
            WatchedStore watched = new WatchedStore(store);
            Started w = start(watched, SHORT);
            awaitIdleAndListening(w, watched, 2);
            int claimsBefore = watched.calls.get();

            assertThat(terminateListenBackends()).as("the worker's LISTEN backend was found and terminated").isEqualTo(1);
            // Reconnected, and the catch-up claim pass that follows every (re)connect has run and gone idle.
            Await.until(SOON, "listener reconnected and claim loop idle again", () -> w.channel().reconnects() >= 1
                    && w.channel().isConnected() && watched.calls.get() > claimsBefore && watched.idleFor(Duration.ofMillis(100)));

            JobId id = enqueue("probe", "{\"ms\": 0}");
            long enqueued = System.nanoTime();

            Duration latency = awaitFirstStart(id, enqueued);
            assertThat(latency).as("after reconnecting, from the enqueue's return to the handler's start (poll 60 s)")
                    .isLessThan(SOON);
            assertThat(awaitState(id, JobState.DONE).attempts()).isEqualTo(1);
        }

        /** Kills every LISTEN session on this test database but our own; returns how many. */
        int terminateListenBackends() {
            return db.dsl().resultQuery("""
                    SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                    WHERE datname = current_database() AND query LIKE 'LISTEN%' AND pid <> pg_backend_pid()) k""")
                    .fetchSingle(0, Integer.class);
        }
    }

    // ---------------------------------------------------------------------------------------------

    @Nested
    class Recovery {

        @Test
        void aCrashedWorkersJobIsReapedByALiveWorkersMaintenanceAndRunToDone() {
            JobId id = enqueue("probe", "{\"ms\": 0}");
            // The "crashed" worker: claims with a 500 ms lease and never heartbeats, completes or fails.
            List<Job> crashed = store.claim(new ClaimRequest(List.of(queue), WorkerId.of("crashed-worker"), 1,
                    Duration.ofMillis(500)));
            assertThat(crashed).extracting(Job::id).containsExactly(id);

            Started live = start(store, SHORT.toBuilder().workerId(WorkerId.of("live-worker")).build());
            Job done = awaitState(id, JobState.DONE);

            assertThat(done.attempts()).as("the crashed run counted as attempt 1").isEqualTo(2);
            assertThat(done.lastError()).as("the reap's note").hasValueSatisfying(e ->
                    assertThat(e).contains("lease expired").contains("crashed-worker"));
            assertThat(probe.invocations(id)).as("the handler ran once, on the live worker").isEqualTo(1);
            assertThat(live.events().claimsOf(id)).singleElement().satisfies(j -> {
                assertThat(j.attempts()).isEqualTo(2);
                assertThat(j.lockedBy()).contains(WorkerId.of("live-worker"));
            });
        }
    }

    // ---------------------------------------------------------------------------------------------

    @Nested
    class Outcomes {

        @Test
        void aHandlerFailingTwiceThenSucceedingEndsDoneOnAttemptThreeWithItsResult() {
            Started w = start(store, SHORT);
            JobId id = enqueue("fail", "{\"times\": 2}");

            Job done = awaitState(id, JobState.DONE);
            awaitFailureReports(w, id, 2);
            assertThat(done.attempts()).isEqualTo(3);
            assertThat(done.result().map(Json::json)).contains(json("{\"succeeded_on_attempt\": 3}"));
            assertThat(w.events().failedOf(id)).as("two recorded failures, each scheduled for a retry")
                    .extracting(Job::state, Job::attempts)
                    .containsExactlyInAnyOrder(tuple(JobState.SCHEDULED, 1),
                            tuple(JobState.SCHEDULED, 2));
            assertThat(w.events().claimsOf(id)).extracting(Job::attempts).containsExactly(1, 2, 3);
        }

        @Test
        void aHandlerThrowingPermanentJobFailureEndsDeadAfterOneAttempt() {
            Started w = start(store, SHORT);
            JobId id = enqueue("fail", "{\"times\": 5, \"permanent\": true, \"message\": \"card declined\"}");

            Job dead = awaitState(id, JobState.DEAD);
            awaitFailureReports(w, id, 1);
            assertThat(dead.attempts()).as("attempts used").isEqualTo(1);
            assertThat(dead.maxAttempts()).as("attempts it had left did not matter").isEqualTo(Job.DEFAULT_MAX_ATTEMPTS);
            assertThat(dead.lastError()).contains("card declined");
            assertThat(dead.finishedAt()).isPresent();
            assertThat(w.events().claimsOf(id)).hasSize(1);
            assertThat(w.events().failedOf(id)).extracting(Job::state).containsExactly(JobState.DEAD);
        }
    }

    // ---------------------------------------------------------------------------------------------

    /**
     * PostgreSQL prints jsonb numbers in plain notation and the worker parses payloads with Jackson,
     * whose default limit is 1,000 characters per number: the limit {@link io.jobq.domain.job.JsonNumbers}
     * holds payloads to. 1e999 prints as 1,000 digits and runs; 1e1000 (1,001 digits), smuggled past the
     * enqueue checks and the schema's jobs_payload_readable rule with SQL (as a row from before schema V2),
     * cannot even be parsed.
     */
    @Nested
    class PayloadNumbers {

        @Test
        void aNumberPrintedWithAThousandDigitsRunsAndOneMoreDigitWouldNot() {
            JobId ok = enqueue("noop", "{\"n\": 1e999, \"negative\": -1e999, \"fraction\": 1e-999}");
            JobId smuggled = enqueue("noop", "{\"n\": 1}");
            db.dsl().transaction(tx -> {
                tx.dsl().execute("SET LOCAL session_replication_role = replica"); // no triggers for this write
                tx.dsl().execute("UPDATE jobs SET payload = '{\"n\": 1e1000}' WHERE id = {0}", smuggled.value());
            });
            start(store, SHORT);

            assertThat(awaitState(ok, JobState.DONE).attempts()).isEqualTo(1);
            Job dead = awaitState(smuggled, JobState.DEAD);
            assertThat(dead.attempts()).as("a payload that never parses is not retried").isEqualTo(1);
            assertThat(dead.lastError()).hasValueSatisfying(e -> assertThat(e).contains("not valid JSON"));
        }

        @Test
        void theEnqueueChecksRefuseTheLongerOne() {
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> enqueue("noop", "{\"n\": 1e1000}"))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("payload");
        }
    }

    // ---------------------------------------------------------------------------------------------

    @Nested
    class Heartbeats {

        /** The real store, or the same store with {@link JobStore#heartbeat} switched off. */
        enum Beating {
            ON, OFF;

            JobStore wrap(JobStore real) {
                return this == ON ? real : new HeartbeatsSwitchedOff(real);
            }
        }

        /**
         * A 3 s job under a 1 s lease, heartbeat every 200 ms (so one heartbeat round trip may take up to
         * 800 ms on a loaded machine), maintenance every 100 ms. With heartbeats it finishes on its first
         * and only run. With heartbeats switched off, the very same scenario and checks see the lease lapse
         * and the job reaped: proof that the first case could fail. The job is enqueued only once the
         * worker is up and idle, so start-up costs do not eat into the first lease.
         */
        @ParameterizedTest(name = "heartbeats {0}")
        @EnumSource(Beating.class)
        void heartbeatsKeepAThreeSecondJobAliveUnderAOneSecondLease(Beating heartbeats) {
            // Warm the heartbeat path on this JVM (class loading, first array binds), so that a cold first
            // heartbeat on a heavily loaded machine does not by itself outlast the 1 s lease. The token
            // names no real run: it extends nothing.
            store.heartbeat(List.of(new FencingToken(new JobId(Long.MAX_VALUE), WorkerId.of("warm-up"), 1)),
                    Duration.ofSeconds(1));
            WatchedStore watched = new WatchedStore(heartbeats.wrap(store));
            Started w = start(watched, SHORT.toBuilder().lease(Duration.ofSeconds(1)).heartbeatInterval(Duration.ofMillis(200))
                    .gracePeriod(Duration.ZERO).build());
            awaitIdleAndListening(w, watched, 2);
            JobId id = enqueue("probe", "{\"ms\": 3000}");

            Job settled = awaitJob(id, "done or reaped", j -> j.state() == JobState.DONE || reaped(j));
            boolean keptAlive = settled.state() == JobState.DONE && settled.attempts() == 1 && probe.invocations(id) == 1;

            assertThat(keptAlive).as("kept alive: done on attempt 1, handler invoked once; was %s; heartbeats %s; "
                    + "heartbeat calls %s", settled, w.events().beats, watched.heartbeats).isEqualTo(heartbeats == Beating.ON);
            assertThat(reaped(settled)).as("reaped: attempts >= 2 or last_error names the expired lease; was %s", settled)
                    .isEqualTo(heartbeats == Beating.OFF);
            if (heartbeats == Beating.ON) {
                assertThat(settled.lastError()).isEmpty();
                assertThat(w.events().extendedLeases.get()).as("leases extended by heartbeats").isPositive();
                assertThat(w.events().discards).isEmpty();
            } else {
                // The first run sleeps on, finishes at ~3 s, and its stale completion is refused.
                FencingToken first = new FencingToken(id, w.worker().id(), 1);
                Await.until(SOON, "attempt 1's completion refused", () -> w.events().discards.contains(
                        new Events.Discard(first, DiscardReason.WRITE_REJECTED)));
            }
        }

        static boolean reaped(Job j) {
            return j.attempts() >= 2 || j.lastError().filter(e -> e.contains("lease expired")).isPresent();
        }
    }

    // ---------------------------------------------------------------------------------------------

    @Nested
    class Shutdown {

        /**
         * Two slots, busy with a 4 s job and a 3 s job, so jobs enqueued meanwhile cannot be claimed before
         * close() begins (the test thread has 3 s for its enqueues, even on a loaded machine). The 3 s job
         * frees a slot during the grace period: a worker that kept claiming while it drains would take one
         * of them then.
         */
        @Test
        void closeLetsRunningJobsFinishWithinTheGracePeriodAndClaimsNothingAfterItBegan() {
            Duration grace = Duration.ofSeconds(10);
            Started w = start(store, SHORT.toBuilder().concurrency(2).gracePeriod(grace).build());
            JobId longer = enqueue("probe", "{\"ms\": 4000}");
            JobId shorter = enqueue("probe", "{\"ms\": 3000}");
            Await.until(SOON, "both jobs started", () -> probe.invocations(longer) == 1 && probe.invocations(shorter) == 1);
            List<JobId> waiting = IntStream.range(0, 3).mapToObj(i -> enqueue("probe", "{\"ms\": 0}")).toList();
            assertThat(store.get(longer).orElseThrow().state()).as("still running as close() begins")
                    .isEqualTo(JobState.RUNNING);

            long closeBegan = System.nanoTime();
            w.worker().close();
            Duration took = Duration.ofNanos(System.nanoTime() - closeBegan);

            assertThat(took).as("close() returned within the grace period").isLessThan(grace);
            assertThat(w.events().stopped.getCount()).as("listener told the worker stopped").isZero();
            for (JobId id : List.of(longer, shorter)) {
                Job done = store.get(id).orElseThrow();
                assertThat(done.state()).as("job %s recorded before close() returned", id).isEqualTo(JobState.DONE);
                assertThat(done.attempts()).isEqualTo(1);
            }
            assertThat(store.get(longer).orElseThrow().result().map(Json::json))
                    .contains(json("{\"slept_ms\": 4000}"));

            assertThat(w.events().claims).as("every claim happened before close() began")
                    .allSatisfy(c -> assertThat(c.atNanos()).isLessThan(closeBegan));
            assertThat(w.events().claimedIds()).containsExactlyInAnyOrder(longer, shorter);
            for (JobId id : waiting) {
                Job j = store.get(id).orElseThrow();
                assertThat(j.state()).as("job %s after close()", id).isEqualTo(JobState.QUEUED);
                assertThat(j.attempts()).isZero();
                assertThat(probe.invocations(id)).isZero();
            }
            assertThat(w.channel().isConnected()).as("the worker closed its wake-up channel").isFalse();
        }
    }

    // ---------------------------------------------------------------------------------------------

    @Nested
    class AtScale {
        static final int JOBS = 2000;
        static final int WORKERS = 4;
        /** About 10 s on an idle 2-core machine; the bound is for one shared with other builds. */
        static final Duration ALL_SETTLED = Duration.ofSeconds(90);

        /**
         * 4 workers (4 slots each, a pool of their own each, as separate processes would have) over 2,000
         * jobs of 4 tenants, by index i: i % 20 in 0..11 succeed (1,200), 12..15 fail once then succeed
         * (400), 16..18 fail permanently (300), 19 sleep 20 ms then succeed (100). Every run writes a
         * side-effect row keyed by (job, attempt) before it returns or throws. In each lock mode: under
         * {@code FOR UPDATE} a writer thread per worker writes the outcomes, under {@code SKIP LOCKED} the
         * claims carry them.
         */
        @ParameterizedTest
        @EnumSource(LockMode.class)
        void fourWorkersRunTwoThousandMixedJobsToDoneOrDeadAndEachSuccessHappensOnce(LockMode mode) {
            db.execute("DROP TABLE IF EXISTS side_effects"); // the other mode's run
            db.execute("CREATE TABLE side_effects (job_id bigint, attempt int, outcome text, PRIMARY KEY (job_id, attempt))");
            SideEffects effects = new SideEffects(pool(6));
            handlers.register("effect", effects);
            List<Started> started = new ArrayList<>();
            for (int i = 0; i < WORKERS; i++) {
                JobStore own = new PostgresJobStore(pool(4), PostgresJobStore.Options.DEFAULTS.withLockMode(mode));
                started.add(start(own, SHORT.toBuilder().workerId(WorkerId.of("load-" + mode + "-" + i)).build()));
            }

            for (int t = 0; t < 4; t++) {
                List<String> payloads = new ArrayList<>();
                for (int i = t * (JOBS / 4); i < (t + 1) * (JOBS / 4); i++) payloads.add("{\"kind\": \"" + kindOf(i) + "\"}");
                store.enqueueBatch(new NewJobBatch(TenantId.of("tenant-" + t), queue, TaskName.of("effect"), payloads, 3,
                        Duration.ZERO));
            }
            Await.until(ALL_SETTLED, "all " + JOBS + " jobs recorded done or dead",
                    () -> started.stream().mapToInt(s -> s.events().finished.get()).sum() >= JOBS);

            List<String> byKind = db.dsl().resultQuery("""
                    SELECT payload->>'kind' || ' ' || state || ' attempts=' || attempts || ': ' || count(*)
                    FROM jobs WHERE queue = ? GROUP BY payload->>'kind', state, attempts ORDER BY 1""", queue.value())
                    .fetch(0, String.class);
            List<Long> doneWithoutExactlyOneSuccess = db.dsl().resultQuery("""
                    SELECT j.id FROM jobs j WHERE j.queue = ? AND j.state = 'done'
                    AND (SELECT array_agg(s.attempt) FROM side_effects s WHERE s.job_id = j.id AND s.outcome = 'ok')
                        IS DISTINCT FROM ARRAY[j.attempts]""", queue.value()).fetch(0, Long.class);
            List<Long> deadWithASuccess = db.dsl().resultQuery("""
                    SELECT j.id FROM jobs j WHERE j.queue = ? AND j.state = 'dead'
                    AND EXISTS (SELECT 1 FROM side_effects s WHERE s.job_id = j.id AND s.outcome = 'ok')""", queue.value())
                    .fetch(0, Long.class);
            long runs = db.dsl().resultQuery("SELECT count(*) FROM side_effects").fetchSingle(0, Long.class);
            long attempts = db.dsl().resultQuery("SELECT sum(attempts) FROM jobs WHERE queue = ?", queue.value())
                    .fetchSingle(0, Long.class);

            // Soft: when something is wrong, every check below reports, not just the first.
            SoftAssertions.assertSoftly(soft -> {
                soft.assertThat(byKind).as("every job done or dead, none stuck, each after the expected attempts")
                        .containsExactly(
                                "fail_once done attempts=2: 400",
                                "ok done attempts=1: 1200",
                                "permanent dead attempts=1: 300",
                                "sleep done attempts=1: 100");
                soft.assertThat(doneWithoutExactlyOneSuccess)
                        .as("done jobs whose successful run was not recorded exactly once, at the attempt that completed")
                        .isEmpty();
                soft.assertThat(deadWithASuccess).as("dead jobs that had succeeded").isEmpty();
                soft.assertThat(effects.duplicates).as("runs of a job at an attempt that had already run").isEmpty();
                soft.assertThat(runs).as("handler runs recorded = attempts claimed (each attempt ran exactly once)")
                        .isEqualTo(attempts);
                soft.assertThat(started.stream().mapToInt(s -> s.events().finished.get()).sum())
                        .as("outcomes recorded (a job finished twice would count twice)").isEqualTo(JOBS);
                soft.assertThat(started).as("every worker took part")
                        .allSatisfy(s -> assertThat(s.events().claimedJobs()).isPositive());
            });
        }

        static String kindOf(int i) {
            int k = i % 20;
            if (k <= 11) return "ok";
            if (k <= 15) return "fail_once";
            if (k <= 18) return "permanent";
            return "sleep";
        }
    }

    // ---------------------------------------------------------------------------------------------
    // fixture

    record Started(Worker worker, PostgresWakeupChannel channel, Events events) {}

    /** Builds and starts a worker serving this test's queue, with its own LISTEN connection. */
    Started start(JobStore jobStore, WorkerSettings settings) {
        PostgresWakeupChannel channel = new PostgresWakeupChannel(db.jdbcUrl(), db.dataSource(), LISTEN_OPTIONS);
        Events events = new Events();
        Worker worker = Worker.builder(jobStore, handlers).wakeups(channel).settings(settings.toBuilder().queues(queue).build())
                .retryPolicy(TINY_BACKOFF).listener(events).build();
        workers.add(worker);
        worker.start();
        return new Started(worker, channel, events);
    }

    /**
     * Waits until the listener is connected and the claim loop has made at least {@code minClaims}
     * claims (its first pass and the catch-up pass after LISTEN, in either order) and then sat idle for
     * 100 ms: from here only a wake-up or the 60 s poll can start another claim.
     */
    void awaitIdleAndListening(Started w, WatchedStore watched, int minClaims) {
        Await.until(SOON, "listener connected and claim loop idle", () -> w.channel().isConnected()
                && watched.calls.get() >= minClaims && watched.idleFor(Duration.ofMillis(100)));
    }

    JobId enqueue(String task, String payload) {
        return store.enqueue(NewJob.of(TENANT, queue, TaskName.of(task), payload)).job().id();
    }

    Job awaitJob(JobId id, String what, Predicate<Job> condition) {
        Await.until(SOON, "job " + id + " " + what, () -> condition.test(store.get(id).orElseThrow()));
        return store.get(id).orElseThrow();
    }

    Job awaitState(JobId id, JobState state) {
        return awaitJob(id, state.dbName(), j -> j.state() == state);
    }

    /**
     * The worker tells its listener about a failure only after the store has recorded it, so a test that
     * has just seen the job's new state in the database must wait for the report too (CI once read the
     * listener between the two and saw nothing).
     */
    void awaitFailureReports(Started w, JobId id, int count) {
        Await.until(SOON, count + " failure report(s) for job " + id, () -> w.events().failedOf(id).size() >= count);
    }

    /** Waits for the job's handler to start; returns how long after {@code sinceNanos} it did. */
    Duration awaitFirstStart(JobId id, long sinceNanos) {
        Await.until(SOON, "job " + id + " started", () -> probe.invocations(id) > 0);
        return Duration.ofNanos(probe.starts.get(id).getFirst() - sinceNanos);
    }

    /** A pool on the test database, closed after the test. */
    HikariDataSource pool(int size) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(db.jdbcUrl());
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(0);
        config.setConnectionTimeout(10_000);
        HikariDataSource pool = new HikariDataSource(config);
        pools.add(pool);
        return pool;
    }


    /** The built-in {@code sleep} ({@code {"ms": n}}), recording the {@link System#nanoTime()} of each start per job. */
    static final class Probe implements JobHandler {
        private final JobHandler sleep = new BuiltInHandlers().handlers(HandlerSettings.EMPTY).get(TaskName.of("sleep"));
        final ConcurrentMap<JobId, List<Long>> starts = new ConcurrentHashMap<>();

        @Override
        public Optional<JsonNode> handle(JobContext ctx) throws Exception {
            starts.computeIfAbsent(ctx.jobId(), k -> new CopyOnWriteArrayList<>()).add(System.nanoTime());
            return sleep.handle(ctx);
        }

        int invocations(JobId id) {
            return starts.getOrDefault(id, List.of()).size();
        }
    }

    /**
     * The load test's handler, by {@code payload.kind}: {@code ok}, {@code fail_once}, {@code permanent},
     * {@code sleep} (20 ms of simulated work). Each run first inserts (job, attempt, outcome) into
     * {@code side_effects}; a run at an attempt that already has a row is a duplicate run, noted in
     * {@link #duplicates} (ON CONFLICT keeps the first row, so the run's own outcome is unaffected).
     */
    static final class SideEffects implements JobHandler {
        private final DataSource pool;
        final List<String> duplicates = new CopyOnWriteArrayList<>();

        SideEffects(DataSource pool) {
            this.pool = pool;
        }

        @Override
        public Optional<JsonNode> handle(JobContext ctx) throws Exception {
            String kind = ctx.payload().path("kind").asText();
            String outcome = switch (kind) {
                case "ok", "sleep" -> "ok";
                case "fail_once" -> ctx.attempt() == 1 ? "retry" : "ok";
                case "permanent" -> "permanent";
                default -> throw new PermanentJobFailure("unknown kind " + kind);
            };
            if (kind.equals("sleep")) Thread.sleep(Duration.ofMillis(20)); // simulated work, not synchronisation
            record(ctx, outcome);
            return switch (outcome) {
                case "retry" -> throw new IllegalStateException("planned failure on attempt " + ctx.attempt());
                case "permanent" -> throw new PermanentJobFailure("planned permanent failure");
                default -> Optional.of(Json.object().put("attempt", ctx.attempt()));
            };
        }

        private void record(JobContext ctx, String outcome) throws SQLException {
            try (Connection c = pool.getConnection(); PreparedStatement st = c.prepareStatement(
                    "INSERT INTO side_effects (job_id, attempt, outcome) VALUES (?, ?, ?) ON CONFLICT DO NOTHING")) {
                st.setLong(1, ctx.jobId().value());
                st.setInt(2, ctx.attempt());
                st.setString(3, outcome);
                if (st.executeUpdate() == 0) duplicates.add(ctx.jobId() + " attempt " + ctx.attempt());
            }
        }
    }

    /**
     * Counts claim calls and notes when the last one returned, so a test can tell the claim loop is idle;
     * times heartbeat calls, for failure messages.
     */
    static final class WatchedStore extends ForwardingJobStore {
        final AtomicInteger calls = new AtomicInteger();
        private final AtomicInteger inFlight = new AtomicInteger();
        private volatile long lastReturn = System.nanoTime();

        WatchedStore(JobStore delegate) {
            super(delegate);
        }

        @Override
        public List<Job> claim(ClaimRequest req) {
            inFlight.incrementAndGet();
            try {
                return super.claim(req);
            } finally {
                lastReturn = System.nanoTime();
                calls.incrementAndGet();
                inFlight.decrementAndGet();
            }
        }

        /** The claim loop's claim that carries outcomes: a claim too. */
        @Override
        public OutcomesThenClaim recordOutcomesThenClaim(List<OutcomeWrite> writes, ClaimRequest req) {
            inFlight.incrementAndGet();
            try {
                return super.recordOutcomesThenClaim(writes, req);
            } finally {
                lastReturn = System.nanoTime();
                calls.incrementAndGet();
                inFlight.decrementAndGet();
            }
        }

        /** Each heartbeat call: when it began (ms since this store was made) and how long it took. */
        final List<String> heartbeats = new CopyOnWriteArrayList<>();
        private final long born = System.nanoTime();

        @Override
        public Set<FencingToken> heartbeat(Collection<FencingToken> tokens, Duration leaseFor) {
            long began = System.nanoTime();
            try {
                return super.heartbeat(tokens, leaseFor);
            } finally {
                heartbeats.add("+" + (began - born) / 1_000_000 + " ms took " + (System.nanoTime() - began) / 1_000_000 + " ms");
            }
        }

        boolean idleFor(Duration quiet) {
            return inFlight.get() == 0 && System.nanoTime() - lastReturn >= quiet.toNanos();
        }
    }

    /**
     * The real store with heartbeats switched off: {@code heartbeat} extends nothing and reports no lost
     * run, as a worker whose heartbeat statements silently did nothing would see. Everything else is real.
     */
    static final class HeartbeatsSwitchedOff extends ForwardingJobStore {
        HeartbeatsSwitchedOff(JobStore delegate) {
            super(delegate);
        }

        @Override
        public Set<FencingToken> heartbeat(Collection<FencingToken> tokens, Duration leaseFor) {
            return Set.of();
        }
    }

    /** Records the worker's events for assertions; claims carry the {@link System#nanoTime()} they were reported at. */
    static final class Events implements WorkerListener {
        record Claim(long atNanos, List<Job> jobs) {}

        record Discard(FencingToken token, DiscardReason reason) {}

        final List<Claim> claims = new CopyOnWriteArrayList<>();
        final List<Job> failed = new CopyOnWriteArrayList<>();
        final List<Discard> discards = new CopyOnWriteArrayList<>();
        /** Runs recorded as done or dead. */
        final AtomicInteger finished = new AtomicInteger();
        final AtomicInteger extendedLeases = new AtomicInteger();
        /** Each heartbeat: milliseconds since this listener was made, leases extended, runs lost. */
        final List<String> beats = new CopyOnWriteArrayList<>();
        private final long born = System.nanoTime();
        final CountDownLatch stopped = new CountDownLatch(1);

        @Override
        public void claimed(List<Job> jobs) {
            claims.add(new Claim(System.nanoTime(), List.copyOf(jobs)));
        }

        @Override
        public void completed(Job job) {
            finished.incrementAndGet();
        }

        @Override
        public void failed(Job claimed, String error, Job recorded) {
            failed.add(recorded);
            if (recorded.state() == JobState.DEAD) finished.incrementAndGet();
        }

        @Override
        public void discarded(FencingToken token, DiscardReason reason) {
            discards.add(new Discard(token, reason));
        }

        @Override
        public void heartbeat(int extended, Set<FencingToken> lost) {
            extendedLeases.addAndGet(extended);
            beats.add("+" + (System.nanoTime() - born) / 1_000_000 + " ms: extended " + extended + ", lost " + lost.size());
        }

        @Override
        public void stopped() {
            stopped.countDown();
        }

        List<Job> claimsOf(JobId id) {
            return claims.stream().flatMap(c -> c.jobs().stream()).filter(j -> j.id().equals(id)).toList();
        }

        List<JobId> claimedIds() {
            return claims.stream().flatMap(c -> c.jobs().stream()).map(Job::id).toList();
        }

        int claimedJobs() {
            return claims.stream().mapToInt(c -> c.jobs().size()).sum();
        }

        List<Job> failedOf(JobId id) {
            return failed.stream().filter(j -> j.id().equals(id)).toList();
        }
    }
}
