package io.jobq.postgres;

import static io.jobq.postgres.StoreFixtures.LEASE;
import static io.jobq.postgres.StoreFixtures.Q;
import static io.jobq.postgres.StoreFixtures.TASK;
import static io.jobq.postgres.StoreFixtures.job;
import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import io.jobq.application.port.ClaimRequest;
import io.jobq.application.port.EnqueueResult;
import io.jobq.application.port.NewJobBatch;
import io.jobq.domain.fairness.TenantWeight;
import io.jobq.domain.job.Job;
import io.jobq.domain.lease.WorkerId;
import io.jobq.domain.tenant.TenantId;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.IntFunction;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * The store under real concurrency: N threads released together by a barrier, each on its own pooled
 * connection, every wait bounded by a timeout. What each test proves is stated as a count the database
 * can confirm (rows, attempts, tags), not only what the threads saw.
 */
class ConcurrencyTest extends PostgresStoreTestCase {

    /** Longest any concurrent phase may take before the test fails instead of hanging. */
    static final Duration PHASE_TIMEOUT = Duration.ofSeconds(60);

    /**
     * Runs {@code task(0..n-1)} on n threads, all released at once by a barrier; returns each thread's
     * result in thread order. Rethrows the first failure (with its SQLSTATE in the message).
     */
    static <T> List<T> together(int n, IntFunction<Callable<T>> task) throws InterruptedException {
        ExecutorService threads = Executors.newFixedThreadPool(n);
        CyclicBarrier start = new CyclicBarrier(n);
        try {
            List<Future<T>> futures = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                Callable<T> body = task.apply(i);
                futures.add(threads.submit(() -> {
                    start.await(10, TimeUnit.SECONDS);
                    return body.call();
                }));
            }
            List<T> results = new ArrayList<>();
            long deadline = System.nanoTime() + PHASE_TIMEOUT.toNanos();
            for (Future<T> f : futures) {
                try {
                    results.add(f.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS));
                } catch (ExecutionException e) {
                    throw new AssertionError("a concurrent task failed (SQLSTATE " + sqlState(e) + "): " + e.getCause(), e.getCause());
                } catch (TimeoutException e) {
                    throw new AssertionError("concurrent phase did not finish within " + PHASE_TIMEOUT, e);
                }
            }
            return results;
        } finally {
            threads.shutdownNow();
            assertThat(threads.awaitTermination(10, TimeUnit.SECONDS)).as("threads stopped").isTrue();
        }
    }

    /** The first SQLSTATE in {@code t}'s cause chain, or null. */
    static String sqlState(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof SQLException sql && sql.getSQLState() != null) return sql.getSQLState();
        }
        return null;
    }

    // ---------------------------------------------------------------- (a)

    @Nested
    class RacingClaimers {
        static final int JOBS = 2000;
        static final int RACERS = 8;

        /** One claim by one racer: the ids it was handed (empty when it found nothing to claim). */
        interface Claim {
            List<Long> claim(WorkerId worker, int limit);
        }

        /** Every id a racer was handed, and by whom; a job handed out twice appears twice. */
        record Race(List<Long> ids, Map<Long, Set<String>> holders) {
            long duplicates() {
                return ids.size() - new HashSet<>(ids).size();
            }
        }

        /**
         * The harness: 2,000 queued jobs of 4 tenants; 8 racers released together, racer i claiming
         * 1 + i % 5 jobs per call until a call returns nothing.
         */
        Race race(Claim claim) throws InterruptedException {
            for (String tenant : List.of("t1", "t2", "t3", "t4")) {
                store.enqueueBatch(new NewJobBatch(TenantId.of(tenant), Q, TASK, Collections.nCopies(JOBS / 4, "{}"), 5, Duration.ZERO));
            }
            List<List<Long>> perRacer = together(RACERS, i -> () -> {
                WorkerId worker = WorkerId.of("racer-" + i);
                List<Long> mine = new ArrayList<>();
                for (List<Long> got = claim.claim(worker, 1 + i % 5); !got.isEmpty(); got = claim.claim(worker, 1 + i % 5)) {
                    mine.addAll(got);
                }
                return mine;
            });
            List<Long> all = new ArrayList<>();
            Map<Long, Set<String>> holders = new HashMap<>();
            for (int i = 0; i < RACERS; i++) {
                all.addAll(perRacer.get(i));
                for (long id : perRacer.get(i)) holders.computeIfAbsent(id, k -> new HashSet<>()).add("racer-" + i);
            }
            return new Race(all, holders);
        }

        /**
         * A claim with the lock left out: read the lowest queued ids WITHOUT FOR UPDATE, pause 2 ms (so
         * racers' reads overlap reliably), then mark each of those ids running WITHOUT re-checking its
         * state. Two racers that read the same ids both "win" them. The ids are updated one statement each
         * in ascending order: one multi-row UPDATE visits rows in physical order, which after a few updates
         * differs between racers and deadlocks them (40P01) instead of showing the double claim.
         */
        List<Long> brokenClaim(WorkerId worker, int limit) {
            return db.dsl().transactionResult(cfg -> {
                List<Long> ids = cfg.dsl().resultQuery(
                                "SELECT id FROM jobs WHERE state = 'queued' AND queue = {0} ORDER BY vtime, id LIMIT {1}",
                                Q.value(), DSL.val(limit, SQLDataType.INTEGER))
                        .fetch(r -> r.get(0, Long.class));
                if (ids.isEmpty()) return List.of();
                cfg.dsl().execute("SELECT pg_sleep(0.002)");
                List<Long> won = new ArrayList<>();
                for (long id : ids.stream().sorted().toList()) {
                    won.addAll(cfg.dsl().resultQuery("""
                                    UPDATE jobs SET state = 'running', attempts = attempts + 1, locked_by = {0},
                                        locked_until = now() + interval '30 seconds', started_at = now()
                                    WHERE id = {1} RETURNING id""", worker.value(), id)
                            .fetch(r -> r.get(0, Long.class)));
                }
                return won;
            });
        }

        @Test
        void eightClaimersOverTwoThousandJobsClaimEachJobExactlyOnce() throws InterruptedException {
            Race race = race((worker, limit) -> store.claim(new ClaimRequest(List.of(Q), worker, limit, LEASE))
                    .stream().map(j -> j.id().value()).toList());

            assertThat(race.duplicates()).as("jobs handed out twice").isZero();
            assertThat(race.ids()).hasSize(JOBS);
            // the database agrees: each job claimed by one claim (attempts 1) and owned by the racer handed it
            Map<Long, String> owners = db.dsl().resultQuery("SELECT id, locked_by FROM jobs WHERE state = 'running' AND attempts = 1")
                    .fetchMap(r -> r.get(0, Long.class), r -> r.get(1, String.class));
            assertThat(owners).hasSize(JOBS);
            assertThat(owners).allSatisfy((id, owner) -> assertThat(race.holders().get(id)).containsExactly(owner));
        }

        @Test
        void theSameHarnessCatchesDuplicatesWhenTheClaimDoesNotLock() throws InterruptedException {
            Race race = race(this::brokenClaim);

            assertThat(race.duplicates()).as("jobs handed out more than once by the unlocked claim").isPositive();
            assertThat(new HashSet<>(race.ids())).as("every job was still handed out").hasSize(JOBS);
            int claimedTwice = db.dsl().fetchCount(io.jobq.postgres.schema.Tables.JOBS, io.jobq.postgres.schema.Tables.JOBS.ATTEMPTS.gt(1));
            assertThat(claimedTwice).as("the database counted a second claim of some job").isPositive();
        }
    }

    // ---------------------------------------------------------------- (b)

    @Nested
    class ConcurrentEnqueuesOfOneTenant {
        @Test
        void eightEnqueuersGetDistinctTagsIncreasingWithEachTenantsInsertOrder() throws InterruptedException {
            int enqueuers = 8;
            int each = 50;
            List<List<Job>> perThread = together(enqueuers, i -> () -> {
                List<Job> mine = new ArrayList<>();
                for (int k = 0; k < each; k++) mine.add(store.enqueue(job("solo")).job());
                return mine;
            });

            for (List<Job> mine : perThread) {
                assertThat(mine).as("one enqueuer's own jobs get increasing tags").extracting(j -> j.vtime().getAsDouble())
                        .isSorted().doesNotHaveDuplicates();
            }
            List<Double> tags = db.dsl().resultQuery("SELECT vtime FROM jobs WHERE tenant = 'solo' ORDER BY id")
                    .fetch(r -> r.get(0, Double.class));
            // one tenant alone: V is its own head (1), so the tags are exactly 1, 2, …, 400, in insert (id) order
            assertThat(tags).hasSize(enqueuers * each)
                    .containsExactlyElementsOf(IntStream.rangeClosed(1, enqueuers * each).mapToObj(v -> (double) v).toList());
            assertThat(lastVtime("solo")).isEqualTo(enqueuers * each);
        }
    }

    double lastVtime(String tenant) {
        return db.dsl().resultQuery("SELECT last_vtime FROM tenants WHERE queue = {0} AND tenant = {1}", Q.value(), tenant)
                .fetchSingle(0, Double.class);
    }

    // ---------------------------------------------------------------- (c)

    @Nested
    class ConcurrentEnqueuesWithOneIdempotencyKey {
        @Test
        void tenSimultaneousRequestsCreateOneRowAndChargeTheTenantOnce() throws InterruptedException {
            int requests = 10;
            // a pool as large as the crowd, so all ten are in the database at once (the class pool has 8)
            try (HikariDataSource wide = PostgresPool.create(db.jdbcUrl(), requests, "idempotency-race", Duration.ofSeconds(10))) {
                PostgresJobStore wideStore = new PostgresJobStore(wide);
                wideStore.setWeight(TenantId.of("shop"), Q, TenantWeight.of(2));
                for (int round = 0; round < 3; round++) {
                    String key = "order-" + round;
                    double before = lastVtime("shop");

                    List<EnqueueResult> results = together(requests, i -> () -> wideStore.enqueue(job("shop", "{\"from\": " + i + "}")
                            .withIdempotencyKey(key)));

                    List<Long> rows = db.dsl().resultQuery("SELECT id FROM jobs WHERE tenant = 'shop' AND idempotency_key = {0}", key)
                            .fetch(r -> r.get(0, Long.class));
                    assertThat(rows).as("rows with key %s", key).hasSize(1);
                    assertThat(results).as("every request answers with the one row").allSatisfy(r ->
                            assertThat(r.job().id().value()).isEqualTo(rows.getFirst()));
                    Map<Class<?>, Long> kinds = results.stream().collect(Collectors.groupingBy(Object::getClass, Collectors.counting()));
                    assertThat(kinds).containsOnly(Map.entry(EnqueueResult.Created.class, 1L), Map.entry(EnqueueResult.Existing.class, 9L));
                    // one tenant alone, so the step is exactly 1/weight; nine losers rolled their charge back
                    assertThat(lastVtime("shop") - before).as("last_vtime step in round %d", round).isEqualTo(0.5);
                }
            }
        }
    }

    // ---------------------------------------------------------------- (d)

    @Nested
    class ConcurrentPromoters {
        static final int TENANTS = 50;
        static final int PER_TENANT = 100;
        static final int JOBS = TENANTS * PER_TENANT;

        /** 5,000 scheduled jobs, 100 for each of 50 tenants, all due, in an order unrelated to id or tenant. */
        void seedDueJobs() {
            for (int t = 0; t < TENANTS; t++) {
                store.enqueueBatch(new NewJobBatch(TenantId.of("t%02d".formatted(t)), Q, TASK,
                        Collections.nCopies(PER_TENANT, "{}"), 5, Duration.ofHours(1)));
            }
            // 7919 is coprime with 5000, so this is a permutation: every promotion batch spans many tenants
            // and concurrent promoters contend for the same tenant rows.
            db.execute("UPDATE jobs SET run_at = now() - interval '1 second' - (id * 7919 % {0}) * interval '1 millisecond'", JOBS);
        }

        /** Promotes in batches of 50 until a call finds nothing; returns how many this caller promoted. */
        /**
         * Promotes until no job is left scheduled. Not until a pass promotes none: a pass that waited too long
         * for a tenant row a racing promoter held passes that tenant by, and leaves it out for a moment
         * ({@link DuePromotion#REMEMBERED}), so a pass can promote none while some are due.
         */
        int promoteUntilNoneDue() {
            int promoted = 0;
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (db.dsl().fetchCount(db.dsl().selectFrom("jobs").where("state = 'scheduled'")) > 0) {
                assertThat(System.nanoTime()).as("every due job promoted within a minute").isLessThan(deadline);
                promoted += store.promoteDue(50);
            }
            return promoted;
        }

        /** Each tenant's tags, listed in the order of its jobs' (run_at, id). */
        Map<String, List<Double>> tagsByTenantInDueOrder() {
            Map<String, List<Double>> tags = new HashMap<>();
            for (var r : db.dsl().resultQuery("SELECT tenant, vtime FROM jobs ORDER BY tenant, run_at, id")) {
                tags.computeIfAbsent(r.get(0, String.class), k -> new ArrayList<>()).add(r.get(1, Double.class));
            }
            return tags;
        }

        @Test
        void fourPromotersOverFiveThousandDueJobsNeverDeadlockAndPromoteEachJobOnce() throws InterruptedException {
            seedDueJobs();

            // any exception, a deadlock (SQLSTATE 40P01) above all, fails the test here
            List<Integer> promotedByEach = together(4, i -> this::promoteUntilNoneDue);

            assertThat(promotedByEach.stream().mapToInt(Integer::intValue).sum()).as("promotions counted").isEqualTo(JOBS);
            assertThat(db.dsl().resultQuery("SELECT state, count(*) FROM jobs GROUP BY state")
                    .fetchMap(r -> r.get(0, String.class), r -> r.get(1, Long.class)))
                    .containsExactly(Map.entry("queued", (long) JOBS));
            Map<String, Double> lastVtimes = db.dsl().resultQuery("SELECT tenant, last_vtime FROM tenants")
                    .fetchMap(r -> r.get(0, String.class), r -> r.get(1, Double.class));
            // Distinct tags per tenant, but NOT necessarily in (run_at, id) order: concurrent promoters take
            // interleaved due sets (SKIP LOCKED) and tag them in the order they get the tenant's row lock. The
            // order holds within a batch and for batches in sequence (next test).
            assertThat(tagsByTenantInDueOrder()).hasSize(TENANTS).allSatisfy((tenant, tags) -> {
                assertThat(tags).as("%s's tags", tenant).hasSize(PER_TENANT).doesNotHaveDuplicates();
                assertThat(lastVtimes.get(tenant)).as("%s's last_vtime", tenant).isEqualTo(Collections.max(tags));
            });
        }

        @Test
        void promotionBatchesInSequenceTagEachTenantsJobsInDueOrder() {
            seedDueJobs();

            assertThat(promoteUntilNoneDue()).isEqualTo(JOBS);

            Map<String, Double> lastVtimes = db.dsl().resultQuery("SELECT tenant, last_vtime FROM tenants")
                    .fetchMap(r -> r.get(0, String.class), r -> r.get(1, Double.class));
            assertThat(tagsByTenantInDueOrder()).hasSize(TENANTS).allSatisfy((tenant, tags) -> {
                assertThat(tags).as("%s's tags in (run_at, id) order", tenant).hasSize(PER_TENANT)
                        .doesNotHaveDuplicates().isSorted();
                assertThat(lastVtimes.get(tenant)).as("%s's last_vtime", tenant).isEqualTo(tags.getLast());
            });
        }
    }
}
