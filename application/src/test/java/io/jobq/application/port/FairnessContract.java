package io.jobq.application.port;

import static io.jobq.application.port.JobStoreContract.LEASE;
import static io.jobq.application.port.JobStoreContract.Q;
import static io.jobq.application.port.JobStoreContract.TASK;
import static io.jobq.application.port.JobStoreContract.W1;
import static io.jobq.application.port.JobStoreContract.job;
import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.domain.fairness.TenantWeight;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobId;
import io.jobq.domain.tenant.TenantId;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.stream.IntStream;
import org.assertj.core.api.Condition;
import org.junit.jupiter.api.Test;

/**
 * The five consequences of start-time fair queuing that a store must show (the formula,
 * {@code max(V, L) + 1/weight}, is documented in the PostgreSQL adapter's {@code FairTags}), each a
 * scenario played through the {@link JobStore} port and judged by ONE condition. {@link JobStoreContract}
 * runs them against every store (its nested {@code Fairness}). The PostgreSQL tests ({@code FairnessTest})
 * run the same scenarios against a store that claims in id order (FIFO) and require every condition to
 * FAIL there: a scenario FIFO also passed would test nothing.
 *
 * <p>Vtime arithmetic in the comments: a tenant arriving while the queue's head has tag h starts at h + 1,
 * tying the flood's job there, which wins the tie by its lower id.
 */
public abstract class FairnessContract {

    /** The store under test, empty at the start of each scenario. */
    protected abstract JobStore store();

    /** Makes {@code by} pass for the store's scheduled jobs (see {@link JobStoreContract#advanceTime}). */
    protected abstract void advanceTime(Duration by);

    // ---------------------------------------------------------------- shorthands

    /** Claims {@code n} jobs one at a time (limit 1), in claim order; fails if the queue runs dry first. */
    List<Job> claimOneByOne(int n) {
        List<Job> claimed = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            List<Job> one = store().claim(new ClaimRequest(List.of(Q), W1, 1, LEASE));
            assertThat(one).as("claim %d of %d found a queued job", i + 1, n).hasSize(1);
            claimed.add(one.getFirst());
        }
        return claimed;
    }

    static List<String> tenants(List<Job> jobs) {
        return jobs.stream().map(j -> j.tenant().value()).toList();
    }

    /** {@code n} runnable jobs of {@code tenant} in one batch: consecutive tags, consecutive ids. */
    List<JobId> enqueueBacklog(String tenant, int n) {
        return store().enqueueBatch(new NewJobBatch(TenantId.of(tenant), Q, TASK, Collections.nCopies(n, "{}"), 5,
                Duration.ZERO));
    }

    public static int count(List<? extends String> sequence, String tenant) {
        return (int) sequence.stream().filter(tenant::equals).count();
    }

    // ---------------------------------------------------------------- (a) a late tenant interleaves with a flood

    static final int LATE_JOBS = 10;
    /**
     * Window for the late tenant's 10 jobs. A's head is at tag 101 when B arrives, so B gets 102..111;
     * each of B's tags ties one of A's and loses the tie by id: A101, A102, B102, A103, B103, …, B111,
     * B's k-th job being claim 2k+1, the 10th claim 21.
     */
    static final int WINDOW = 2 * LATE_JOBS + 1;

    public static final Condition<List<? extends String>> ALL_LATE_JOBS_IN_WINDOW = new Condition<>(
            seq -> count(seq.subList(0, WINDOW), "b") == LATE_JOBS,
            "all %d of b's jobs among the next %d claims", LATE_JOBS, WINDOW);

    /** A floods 1,000 jobs, 100 are claimed, then B enqueues 10; returns the tenants of the next 40 claims. */
    public List<String> lateTenantAmongAFlood() {
        enqueueBacklog("a", 1000);
        assertThat(store().claim(new ClaimRequest(List.of(Q), W1, 100, LEASE))).hasSize(100)
                .allMatch(j -> j.tenant().value().equals("a"));
        for (int i = 0; i < LATE_JOBS; i++) store().enqueue(job("b"));
        return tenants(claimOneByOne(40));
    }

    @Test
    void aLateTenantsJobsAreAllClaimedWithinTheNext21Claims() {
        List<String> next = lateTenantAmongAFlood();
        assertThat(next).is(ALL_LATE_JOBS_IN_WINDOW);
        assertThat(next.subList(0, WINDOW)).containsExactly(
                "a", "a", "b", "a", "b", "a", "b", "a", "b", "a", "b", "a", "b", "a", "b", "a", "b", "a", "b", "a", "b");
    }

    // ---------------------------------------------------------------- (b) tenants with backlogs take strict turns

    static final int BACKLOG = 30;

    /**
     * A, B, C enqueue 30 each, in that order: A holds tags 1..30, B and C arrive at V = 1 and get 2..31.
     * So A's head job goes alone (tag 1), then tags 2..30 are claimed as A, B, C (ties by id), then the
     * tail 31 as B, C. Strict turns: claims 2..88 (87 claims, 29 full rounds) rotate A, B, C.
     */
    public static final Condition<List<? extends String>> STRICT_TURNS = new Condition<>(seq -> {
        List<? extends String> rounds = seq.subList(1, 1 + 3 * (BACKLOG - 1));
        return IntStream.range(0, rounds.size()).allMatch(i -> rounds.get(i).equals(List.of("a", "b", "c").get(i % 3)));
    }, "claims 2..88 rotate strictly a, b, c");

    /** Returns the tenants of all 90 claims. */
    public List<String> threeBacklogs() {
        enqueueBacklog("a", BACKLOG);
        enqueueBacklog("b", BACKLOG);
        enqueueBacklog("c", BACKLOG);
        return tenants(claimOneByOne(3 * BACKLOG));
    }

    @Test
    void threeTenantsWithBacklogsTakeStrictTurns() {
        List<String> seq = threeBacklogs();
        assertThat(seq).is(STRICT_TURNS);
        assertThat(seq.getFirst()).isEqualTo("a");
        assertThat(seq.subList(88, 90)).containsExactly("b", "c");
    }

    // ---------------------------------------------------------------- (c) weights divide claims proportionally

    static final int CLAIMS = 400;

    /** Weight 3 vs 1 over 400 claims: 300 vs 100, within 5% (±15 and ±5). */
    public static final Condition<List<? extends String>> THREE_TO_ONE = new Condition<>(
            seq -> Math.abs(count(seq, "heavy") - 300) <= 15 && Math.abs(count(seq, "light") - 100) <= 5,
            "heavy 300 ± 15 and light 100 ± 5 of %d claims", CLAIMS);

    /**
     * heavy (weight 3) and light (weight 1) arrive in alternating chunks of 50, 500 jobs each, so
     * arrival order itself is 1:1. heavy's tags advance by 1/3, light's by 1: up to tag T heavy has
     * about 3T jobs and light T, and 3T + T = 400 at T ≈ 100. Returns the tenants of 400 claims.
     */
    public List<String> weightedBacklogs() {
        store().setWeight(TenantId.of("heavy"), Q, TenantWeight.of(3));
        store().setWeight(TenantId.of("light"), Q, TenantWeight.of(1));
        for (int chunk = 0; chunk < 10; chunk++) {
            enqueueBacklog("heavy", 50);
            enqueueBacklog("light", 50);
        }
        return tenants(claimOneByOne(CLAIMS));
    }

    @Test
    void weightsThreeToOneGiveThreeClaimsToOne() {
        assertThat(weightedBacklogs()).is(THREE_TO_ONE);
    }

    // ---------------------------------------------------------------- (d) an idle tenant banks no credit

    static final int BURST = 20;

    /**
     * On its return, b's burst gets about half of the next 20 claims: not all of them (that would be
     * credit banked while idle: a tag restarting from b's old last tag 3 would put all 20 before a's
     * next job, at tag 49) and not none of them (b waiting behind a's backlog).
     */
    public static final Condition<List<? extends String>> SHARES_ON_RETURN = new Condition<>(
            seq -> count(seq.subList(0, BURST), "b") >= 8 && count(seq.subList(0, BURST), "b") <= 12
                    && seq.subList(0, 3).contains("a"),
            "b gets 8..12 of the next %d claims and a one of the first 3", BURST);

    /**
     * b runs 3 jobs (tags 1..3) alongside a's 200 (tags 2..201), then idles while a's jobs run through
     * claim 50 (a's head is then tag 49). b returns with 20 jobs: tags max(49, 3) + 1.. = 50..69, so
     * claims go a49, a50, b50, a51, b51, …: 9 of b's among the next 20. Returns the tenants of 40 claims.
     */
    public List<String> idleTenantReturns() {
        for (int i = 0; i < 3; i++) store().enqueue(job("b"));
        enqueueBacklog("a", 200);
        List<String> before = tenants(claimOneByOne(50));
        assertThat(count(before, "b")).as("b ran its 3 jobs, then went idle").isEqualTo(3);
        for (int i = 0; i < BURST; i++) store().enqueue(job("b"));
        return tenants(claimOneByOne(2 * BURST));
    }

    @Test
    void anIdleTenantBanksNoCredit() {
        List<String> seq = idleTenantReturns();
        assertThat(seq).is(SHARES_ON_RETURN);
        assertThat(seq.getFirst()).as("a's next job is not pushed back by the burst").isEqualTo("a");
    }

    // ---------------------------------------------------------------- (e) new jobs never overtake the tenant's own backlog

    /** One claim, printed compactly as tenant and job id (a41) so a failure shows the whole sequence. */
    public record Claimed(String tenant, long id) {
        @Override
        public String toString() {
            return tenant + id;
        }
    }

    /** The claims of scenario (e), and a's job ids in the order they became runnable. */
    public record OwnBacklog(List<Claimed> claims, List<Long> runnableOrderOfA) {}

    /**
     * Two halves: (1) a's jobs are claimed in the order they became runnable, so neither a new job nor an
     * old delayed job that comes due jumps a's own backlog; and (2) a still gets its fair share: while a has
     * work, at most two other claims come between two of a's (ties go to the lower id, so a sometimes loses
     * a tie and waits two). FIFO breaks both: it claims the promoted job (the oldest id) at once, and makes a's
     * new jobs wait behind all of b's. A scheme that tagged from V alone (forgetting L) would break (1).
     */
    public static final Condition<OwnBacklog> OWN_ORDER_AND_FAIR_SHARE = new Condition<>(run -> {
        List<Claimed> seq = run.claims();
        List<Integer> aPositions = IntStream.range(0, seq.size()).filter(i -> seq.get(i).tenant().equals("a")).boxed().toList();
        List<Long> aIds = aPositions.stream().map(i -> seq.get(i).id()).toList();
        boolean inRunnableOrder = aIds.equals(run.runnableOrderOfA());
        boolean atMostTwoBetween = IntStream.range(1, aPositions.size())
                .allMatch(i -> aPositions.get(i) - aPositions.get(i - 1) <= 3);
        return inRunnableOrder && atMostTwoBetween;
    }, "a's 16 jobs claimed in the order they became runnable, at most two other claims between two of a's");

    /**
     * a enqueues a delayed job (the lowest id), then 10 runnable (tags 1..10); b enqueues 30 (tags 2..31);
     * 6 claims (a1, a2, b2, a3, b3, a4); the delayed job comes due and is promoted: max(V = 4, L = 10) + 1 =
     * 11, behind a's own 5..10; then a enqueues 5 new jobs: 12..16, level with b's 12..16. Fair order is then
     * b4, a5, b5, …, a10, b10, a11 (the promoted one, lower id than b11), b11, b12, a12, …, b16, a16, b17..b31.
     */
    public OwnBacklog newJobsBehindOwnBacklog() {
        Job delayed = store().enqueue(job("a").withDelay(Duration.ofSeconds(1))).job();
        List<Long> runnableOrderOfA = new ArrayList<>(enqueueBacklog("a", 10).stream().map(JobId::value).toList());
        enqueueBacklog("b", 30);
        List<Job> seq = new ArrayList<>(claimOneByOne(6));
        advanceTime(Duration.ofSeconds(2));
        assertThat(store().promoteDue(10)).as("the delayed job came due").isEqualTo(1);
        runnableOrderOfA.add(delayed.id().value());
        for (int i = 0; i < 5; i++) runnableOrderOfA.add(store().enqueue(job("a")).job().id().value());
        seq.addAll(claimOneByOne(40));
        assertThat(store().claim(new ClaimRequest(List.of(Q), W1, 1, LEASE))).as("all 46 jobs claimed").isEmpty();
        return new OwnBacklog(seq.stream().map(j -> new Claimed(j.tenant().value(), j.id().value())).toList(),
                List.copyOf(runnableOrderOfA));
    }

    @Test
    void aTenantsNewJobsNeverOvertakeItsOwnBacklog() {
        OwnBacklog run = newJobsBehindOwnBacklog();
        assertThat(run).is(OWN_ORDER_AND_FAIR_SHARE);
        List<Claimed> seq = run.claims();
        assertThat(seq.subList(seq.size() - 15, seq.size())).as("b's tags 17..31 come last")
                .extracting(Claimed::tenant).containsOnly("b");
    }
}
