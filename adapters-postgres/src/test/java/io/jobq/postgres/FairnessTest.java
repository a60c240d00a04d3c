package io.jobq.postgres;

import static io.jobq.postgres.StoreFixtures.Q;
import static io.jobq.postgres.StoreFixtures.TASK;
import static io.jobq.postgres.StoreFixtures.W1;
import static io.jobq.postgres.StoreFixtures.claim;
import static io.jobq.postgres.StoreFixtures.job;
import static io.jobq.postgres.StoreFixtures.tenantOf;
import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.application.port.NewJobBatch;
import io.jobq.domain.fairness.TenantWeight;
import io.jobq.domain.job.Job;
import io.jobq.domain.tenant.TenantId;
import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.stream.IntStream;
import org.assertj.core.api.Condition;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The five consequences of start-time fair queuing (architecture.md, "Fair scheduling"), each run twice
 * through the same scenario method: against a FAIR store, where the property must hold, and against a
 * FIFO store (claims by id), where the same property must be violated. The FIFO run is what proves each
 * scenario actually exercises fairness: a scenario FIFO also passes would test nothing.
 *
 * <p>Vtime arithmetic used in the comments: a job becoming runnable gets
 * {@code max(V, tenant.last_vtime) + 1/weight}, V being the lowest queued tag. A tenant arriving while
 * the head of the queue has tag h therefore starts at h + 1, tying the flood's second queued job, which
 * wins the tie by its lower id.
 */
@ExtendWith(PostgresDatabaseExtension.class)
class FairnessTest {

    PostgresJobStore fair;
    PostgresJobStore fifo;

    @BeforeEach
    void setUp(TestDatabase db) {
        db.emptyTables();
        fair = new PostgresJobStore(db.dataSource(), PostgresJobStore.Options.DEFAULTS);
        fifo = new PostgresJobStore(db.dataSource(), PostgresJobStore.Options.DEFAULTS.withClaimOrder(ClaimOrder.FIFO));
    }

    // ---------------------------------------------------------------- helpers shared by all scenarios

    /** Claims {@code n} jobs one at a time (limit 1), in claim order; fails if the queue runs dry first. */
    static List<Job> claimOneByOne(PostgresJobStore store, int n) {
        List<Job> claimed = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            List<Job> one = store.claim(claim(W1, 1));
            assertThat(one).as("claim %d of %d found a queued job", i + 1, n).hasSize(1);
            claimed.add(one.getFirst());
        }
        return claimed;
    }

    static List<String> tenants(List<Job> jobs) {
        return jobs.stream().map(StoreFixtures::tenantOf).toList();
    }

    static void enqueueBacklog(PostgresJobStore store, String tenant, int n) {
        store.enqueueBatch(new NewJobBatch(TenantId.of(tenant), Q, TASK, Collections.nCopies(n, "{}"), 5, Duration.ZERO));
    }

    static int count(List<? extends String> sequence, String tenant) {
        return (int) sequence.stream().filter(tenant::equals).count();
    }

    // ---------------------------------------------------------------- (a)

    @Nested
    class ALateTenantInterleavesWithAFlood {
        static final int LATE_JOBS = 10;
        /**
         * Window for the late tenant's 10 jobs. A's head is at tag 101 when B arrives, so B gets 102..111;
         * each of B's tags ties one of A's and loses the tie by id: A101, A102, B102, A103, B103, …, B111,
         * B's k-th job being claim 2k+1, the 10th claim 21.
         */
        static final int WINDOW = 2 * LATE_JOBS + 1;

        static final Condition<List<? extends String>> ALL_LATE_JOBS_IN_WINDOW = new Condition<>(
                seq -> count(seq.subList(0, WINDOW), "b") == LATE_JOBS,
                "all %d of b's jobs among the next %d claims", LATE_JOBS, WINDOW);

        /** A floods 1,000 jobs, 100 are claimed, then B enqueues 10; returns the tenants of the next 40 claims. */
        List<String> scenario(PostgresJobStore store) {
            enqueueBacklog(store, "a", 1000);
            assertThat(store.claim(claim(W1, 100))).hasSize(100).allMatch(j -> tenantOf(j).equals("a"));
            for (int i = 0; i < LATE_JOBS; i++) store.enqueue(job("b"));
            return tenants(claimOneByOne(store, 40));
        }

        @Test
        void underFairOrderTheLateTenantsJobsAreAllClaimedWithinTheNext21Claims() {
            List<String> next = scenario(fair);
            assertThat(next).is(ALL_LATE_JOBS_IN_WINDOW);
            assertThat(next.subList(0, WINDOW)).containsExactly(
                    "a", "a", "b", "a", "b", "a", "b", "a", "b", "a", "b", "a", "b", "a", "b", "a", "b", "a", "b", "a", "b");
        }

        @Test
        void underFifoOrderTheLateTenantWaitsBehindTheFlood() {
            List<String> next = scenario(fifo);
            assertThat(next).isNot(ALL_LATE_JOBS_IN_WINDOW);
            assertThat(next).as("the 900 queued flood jobs all precede b's").containsOnly("a");
        }
    }

    // ---------------------------------------------------------------- (b)

    @Nested
    class ThreeTenantsWithBacklogsTakeStrictTurns {
        static final int BACKLOG = 30;

        /**
         * A, B, C enqueue 30 each, in that order: A holds tags 1..30, B and C arrive at V = 1 and get 2..31.
         * So A's head job goes alone (tag 1), then tags 2..30 are claimed as A, B, C (ties by id), then the
         * tail 31 as B, C. Strict turns: claims 2..88 (87 claims, 29 full rounds) rotate A, B, C.
         */
        static final Condition<List<? extends String>> STRICT_TURNS = new Condition<>(seq -> {
            List<? extends String> rounds = seq.subList(1, 1 + 3 * (BACKLOG - 1));
            return IntStream.range(0, rounds.size()).allMatch(i -> rounds.get(i).equals(List.of("a", "b", "c").get(i % 3)));
        }, "claims 2..88 rotate strictly a, b, c");

        List<String> scenario(PostgresJobStore store) {
            enqueueBacklog(store, "a", BACKLOG);
            enqueueBacklog(store, "b", BACKLOG);
            enqueueBacklog(store, "c", BACKLOG);
            return tenants(claimOneByOne(store, 3 * BACKLOG));
        }

        @Test
        void underFairOrderClaimsRotateATurnPerTenant() {
            List<String> seq = scenario(fair);
            assertThat(seq).is(STRICT_TURNS);
            assertThat(seq.getFirst()).isEqualTo("a");
            assertThat(seq.subList(88, 90)).containsExactly("b", "c");
        }

        @Test
        void underFifoOrderEachBacklogRunsToTheEndBeforeTheNextTenantsFirstJob() {
            List<String> seq = scenario(fifo);
            assertThat(seq).isNot(STRICT_TURNS);
            List<String> expected = new ArrayList<>();
            for (String t : List.of("a", "b", "c")) expected.addAll(Collections.nCopies(BACKLOG, t));
            assertThat(seq).isEqualTo(expected);
        }
    }

    // ---------------------------------------------------------------- (c)

    @Nested
    class WeightsDivideClaimsProportionally {
        static final int CLAIMS = 400;

        /** Weight 3 vs 1 over 400 claims: 300 vs 100, within 5% (±15 and ±5). */
        static final Condition<List<? extends String>> THREE_TO_ONE = new Condition<>(
                seq -> Math.abs(count(seq, "heavy") - 300) <= 15 && Math.abs(count(seq, "light") - 100) <= 5,
                "heavy 300 ± 15 and light 100 ± 5 of %d claims", CLAIMS);

        /**
         * heavy (weight 3) and light (weight 1) arrive in alternating chunks of 50, 500 jobs each, so
         * arrival order itself is 1:1. heavy's tags advance by 1/3, light's by 1: up to tag T heavy has
         * about 3T jobs and light T, and 3T + T = 400 at T ≈ 100.
         */
        List<String> scenario(PostgresJobStore store) {
            store.setWeight(TenantId.of("heavy"), Q, TenantWeight.of(3));
            store.setWeight(TenantId.of("light"), Q, TenantWeight.of(1));
            for (int chunk = 0; chunk < 10; chunk++) {
                enqueueBacklog(store, "heavy", 50);
                enqueueBacklog(store, "light", 50);
            }
            return tenants(claimOneByOne(store, CLAIMS));
        }

        @Test
        void underFairOrderWeightsThreeToOneGiveThreeClaimsToOne() {
            List<String> seq = scenario(fair);
            assertThat(seq).is(THREE_TO_ONE);
        }

        @Test
        void underFifoOrderClaimsFollowArrivalAndIgnoreWeights() {
            List<String> seq = scenario(fifo);
            assertThat(seq).isNot(THREE_TO_ONE);
            // 400 claims by id = four rounds of 50 heavy + 50 light
            assertThat(count(seq, "heavy")).isEqualTo(200);
            assertThat(count(seq, "light")).isEqualTo(200);
        }
    }

    // ---------------------------------------------------------------- (d)

    @Nested
    class AnIdleTenantBanksNoCredit {
        static final int BURST = 20;

        /**
         * On its return, b's burst gets about half of the next 20 claims: not all of them (that would be
         * credit banked while idle: a tag restarting from b's old last_vtime 3 would put all 20 before a's
         * next job, at tag 49) and not none of them (b waiting behind a's backlog).
         */
        static final Condition<List<? extends String>> SHARES_ON_RETURN = new Condition<>(
                seq -> count(seq.subList(0, BURST), "b") >= 8 && count(seq.subList(0, BURST), "b") <= 12
                        && seq.subList(0, 3).contains("a"),
                "b gets 8..12 of the next %d claims and a one of the first 3", BURST);

        /**
         * b runs 3 jobs (tags 1..3) alongside a's 200 (tags 2..201), then idles while a's jobs run
         * through claim 50 (a's head is then tag 49). b returns with 20 jobs: tags max(49, 3) + 1.. = 50..69,
         * so claims go a49, a50, b50, a51, b51, …: 9 of b's among the next 20.
         */
        List<String> scenario(PostgresJobStore store) {
            for (int i = 0; i < 3; i++) store.enqueue(job("b"));
            enqueueBacklog(store, "a", 200);
            List<String> before = tenants(claimOneByOne(store, 50));
            assertThat(count(before, "b")).as("b ran its 3 jobs, then went idle").isEqualTo(3);
            for (int i = 0; i < BURST; i++) store.enqueue(job("b"));
            return tenants(claimOneByOne(store, 2 * BURST));
        }

        @Test
        void underFairOrderAReturningTenantsBurstInterleavesWithTheBusyTenant() {
            List<String> seq = scenario(fair);
            assertThat(seq).is(SHARES_ON_RETURN);
            assertThat(seq.getFirst()).as("a's next job is not pushed back by the burst").isEqualTo("a");
        }

        @Test
        void underFifoOrderAReturningTenantsBurstWaitsBehindTheBusyTenantsWholeBacklog() {
            List<String> seq = scenario(fifo);
            assertThat(seq).isNot(SHARES_ON_RETURN);
            // violated in the other direction from banked credit: b gets nothing, not everything
            assertThat(seq).containsOnly("a");
        }
    }

    // ---------------------------------------------------------------- (e)

    @Nested
    class ATenantsNewJobsNeverOvertakeItsOwnBacklog {
        /** One claim, printed compactly as tenant and job id (a41) so a failure shows the whole sequence. */
        record Claimed(String tenant, long id) {
            @Override
            public String toString() {
                return tenant + id;
            }
        }

        /**
         * The full property has two halves, and FIFO fails only the second one, which is why it is here:
         * (1) a's 15 jobs are claimed in enqueue (id) order: new ones never jump a's own backlog; and
         * (2) a's new jobs still get a's fair share: while a has work, at most two other claims come between
         * two of a's (ties at equal tags go to the lower id, so a sometimes loses one tie and waits two).
         * So a's new jobs join the end of a's OWN backlog, not the end of the queue.
         * FIFO keeps (1) (ids increase per tenant) but breaks (2): a's new jobs wait behind all 26 of b's
         * remaining jobs. A scheme that tagged new jobs from V alone (forgetting last_vtime) would break (1).
         */
        static final Condition<List<? extends Claimed>> OWN_ORDER_AND_FAIR_SHARE = new Condition<>(seq -> {
            List<Integer> aPositions = IntStream.range(0, seq.size()).filter(i -> seq.get(i).tenant().equals("a")).boxed().toList();
            List<Long> aIds = aPositions.stream().map(i -> seq.get(i).id()).toList();
            boolean inEnqueueOrder = aIds.size() == 15 && aIds.equals(aIds.stream().sorted().toList());
            boolean atMostTwoBetween = IntStream.range(1, aPositions.size())
                    .allMatch(i -> aPositions.get(i) - aPositions.get(i - 1) <= 3);
            return inEnqueueOrder && atMostTwoBetween;
        }, "a's 15 jobs claimed in enqueue order, at most two other claims between two of a's");

        /**
         * a enqueues 10 (ids 1..10, tags 1..10), b 30 (ids 11..40, tags 2..31); 6 claims (a1, a2, b2, a3,
         * b3, a4); then a enqueues 5 new jobs (ids 41..45): tags max(V = 4, last 10) + 1.. = 11..15, behind
         * a's own 5..10 but level with b's 11..15. Fair order is then b4, a5, b5, …, a10, b10, b11, a11, b12,
         * a12, …, b15, a15, b16..b31. Returns all 45 claims.
         */
        List<Claimed> scenario(PostgresJobStore store) {
            enqueueBacklog(store, "a", 10);
            enqueueBacklog(store, "b", 30);
            List<Job> seq = new ArrayList<>(claimOneByOne(store, 6));
            for (int i = 0; i < 5; i++) store.enqueue(job("a"));
            seq.addAll(claimOneByOne(store, 39));
            assertThat(store.claim(claim(W1, 1))).as("all 45 jobs claimed").isEmpty();
            return seq.stream().map(j -> new Claimed(tenantOf(j), j.id().value())).toList();
        }

        @Test
        void underFairOrderNewJobsQueueBehindTheTenantsBacklogButNotBehindOtherTenants() {
            List<Claimed> seq = scenario(fair);
            assertThat(seq).is(OWN_ORDER_AND_FAIR_SHARE);
            assertThat(seq.subList(seq.size() - 16, seq.size())).as("b's tags 16..31 come last")
                    .extracting(Claimed::tenant).containsOnly("b");
        }

        @Test
        void underFifoOrderNewJobsKeepTheTenantsOrderButWaitBehindEveryOtherTenant() {
            List<Claimed> seq = scenario(fifo);
            assertThat(seq).isNot(OWN_ORDER_AND_FAIR_SHARE);
            assertThat(seq).as("FIFO also keeps a tenant's own order: half (1) holds")
                    .filteredOn(c -> c.tenant().equals("a")).extracting(Claimed::id).isSorted();
            assertThat(seq.subList(seq.size() - 5, seq.size())).as("half (2) fails: a's new jobs come last of all")
                    .extracting(Claimed::id).containsExactly(41L, 42L, 43L, 44L, 45L);
        }
    }
}
