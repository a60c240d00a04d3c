package io.jobq.domain.fairness;

import static io.jobq.domain.fairness.ReferenceFairQueue.ClaimOrder.FAIR;
import static io.jobq.domain.fairness.ReferenceFairQueue.ClaimOrder.FIFO;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.jobq.domain.fairness.ReferenceFairQueue.ClaimOrder;
import io.jobq.domain.fairness.ReferenceFairQueue.Job;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * The fairness consequences of {@link FairQueue#startTag} that design decision 1 promises
 * (architecture.md: "Consequences to test"), played out on {@link ReferenceFairQueue}.
 *
 * <p>Each scenario measures ONE number and compares it with ONE limit. Under FAIR ordering the
 * limit holds; under FIFO ordering (claim by id, tags assigned exactly the same way) the same
 * measurement breaks it. The FIFO half is what shows the scenario can fail at all: a property that
 * FIFO also satisfied would not be testing fairness.
 */
class FairQueueScenariosTest {

    private static List<String> tenantsOf(List<Job> claims) {
        return claims.stream().map(j -> j.tenant().value()).toList();
    }

    /**
     * (a) Tenant A floods the queue with 1,000 jobs; 50 have been claimed when tenant B enqueues 10.
     * Measured: how many claims after B's arrival it takes until all of B's jobs have been claimed.
     */
    @Nested
    class LateTenantInterleavesWithAFlood {

        /**
         * B's first tag is V + 1 = 52 (A's head is tag 51), its last 61; A has tags 51..61 queued
         * ahead of or level with them, and ties go to A's lower ids: 11 of A's claims and B's 10.
         */
        private static final int LIMIT = 2 * 10 + 1;

        private static int claimsUntilLateTenantIsDone(ClaimOrder order) {
            ReferenceFairQueue queue = new ReferenceFairQueue(order);
            queue.enqueue("A", 1_000);
            assertThat(tenantsOf(queue.claim(50))).containsOnly("A");
            queue.enqueue("B", 10);

            List<Job> after = queue.claimAll();
            assertThat(after).hasSize(950 + 10);
            return tenantsOf(after).lastIndexOf("B") + 1;
        }

        @Test
        void lateTenantIsServedWithinTheNext21ClaimsUnderFairOrdering() {
            assertThat(claimsUntilLateTenantIsDone(FAIR)).isLessThanOrEqualTo(LIMIT);
        }

        @Test
        void lateTenantAlternatesWithTheFloodRatherThanJumpingIt() {
            // Fair is not "B first": A keeps getting every other claim while B catches up.
            ReferenceFairQueue queue = new ReferenceFairQueue(FAIR);
            queue.enqueue("A", 1_000);
            queue.claim(50);
            queue.enqueue("B", 10);

            assertThat(tenantsOf(queue.claim(LIMIT))).containsExactly(
                    "A", "A", "B", "A", "B", "A", "B", "A", "B", "A", "B",
                    "A", "B", "A", "B", "A", "B", "A", "B", "A", "B");
        }

        @Test
        void lateTenantWaitsBehindTheWholeFloodUnderFifo() {
            assertThat(claimsUntilLateTenantIsDone(FIFO)).isGreaterThan(LIMIT).isEqualTo(960);
        }
    }

    /**
     * (b) A, B and C each enqueue a backlog of 100 jobs, in that order. Measured: how many windows
     * of three consecutive claims, while all three still have queued jobs, do not hold each tenant
     * exactly once.
     *
     * <p>The windows start at the second claim: B and C arrive while A's first job is the head
     * (tag 1), so they start at tag 2, one step behind it; SFQ serves the head first. From then on
     * the tags are 2, 2, 2, 3, 3, 3, … and ties go by id, i.e. A, B, C.
     */
    @Nested
    class ThreeTenantsTakeStrictTurns {

        private static int brokenTurns(ClaimOrder order) {
            ReferenceFairQueue queue = new ReferenceFairQueue(order);
            queue.enqueue("A", 100);
            queue.enqueue("B", 100);
            queue.enqueue("C", 100);

            List<String> claims = new ArrayList<>();
            while (queue.queuedCount("A") > 0 && queue.queuedCount("B") > 0 && queue.queuedCount("C") > 0) {
                claims.add(queue.claim().orElseThrow().tenant().value());
            }
            int broken = 0;
            for (int i = 1; i + 3 <= claims.size(); i++) {
                if (Set.copyOf(claims.subList(i, i + 3)).size() != 3) broken++;
            }
            return broken;
        }

        @Test
        void backloggedTenantsAlternateStrictlyUnderFairOrdering() {
            assertThat(brokenTurns(FAIR)).isZero();
        }

        @Test
        void claimSequenceIsARoundRobinAfterTheHeadJob() {
            ReferenceFairQueue queue = new ReferenceFairQueue(FAIR);
            queue.enqueue("A", 100);
            queue.enqueue("B", 100);
            queue.enqueue("C", 100);

            List<String> claims = tenantsOf(queue.claimAll());
            List<String> expected = new ArrayList<>(List.of("A"));
            for (int round = 0; round < 99; round++) expected.addAll(List.of("A", "B", "C"));
            expected.addAll(List.of("B", "C")); // B's and C's tag 101, after A's last (100)
            assertThat(claims).isEqualTo(expected);
        }

        @Test
        void backloggedTenantsRunOneAfterAnotherUnderFifo() {
            assertThat(brokenTurns(FIFO)).isPositive();
        }
    }

    /**
     * (c) A (weight 3) and B (weight 1) each enqueue 400 jobs; 400 are claimed, so both stay
     * backlogged throughout. Measured: B's claims, which should be 100 (a quarter), within 5%
     * of the 400, i.e. A gets 300 ± 5 and B 100 ± 5.
     */
    @Nested
    class WeightsDivideClaimsProportionally {

        private static final int CLAIMS = 400;
        private static final int FAIR_SHARE_OF_B = CLAIMS / 4;
        private static final int TOLERANCE = 5;

        private static Map<String, Integer> claimsPerTenant(ClaimOrder order) {
            ReferenceFairQueue queue = new ReferenceFairQueue(order).weight("A", 3).weight("B", 1);
            queue.enqueue("A", CLAIMS);
            queue.enqueue("B", CLAIMS);

            Map<String, Integer> counts = new HashMap<>(Map.of("A", 0, "B", 0));
            for (String tenant : tenantsOf(queue.claim(CLAIMS))) counts.merge(tenant, 1, Integer::sum);
            return counts;
        }

        @Test
        void weightsThreeToOneGiveThreeToOneClaimsUnderFairOrdering() {
            Map<String, Integer> counts = claimsPerTenant(FAIR);
            assertThat(counts.get("B")).isBetween(FAIR_SHARE_OF_B - TOLERANCE, FAIR_SHARE_OF_B + TOLERANCE);
            assertThat(counts.get("A")).isEqualTo(CLAIMS - counts.get("B"));
        }

        @Test
        void weightsAreIgnoredUnderFifo() {
            Map<String, Integer> counts = claimsPerTenant(FIFO);
            assertThat(Math.abs(counts.get("B") - FAIR_SHARE_OF_B)).isGreaterThan(TOLERANCE);
            assertThat(counts).containsEntry("A", CLAIMS).containsEntry("B", 0);
        }
    }

    /**
     * (d) B runs one job, then stays idle while A's 500 jobs all run and the queue drains. B
     * returns and enqueues 100 jobs, and A enqueues 100 right after. Measured: the longest run of
     * consecutive claims B gets while A has jobs queued.
     *
     * <p>At equal weights B is owed every other claim. The limit is 2: B's first job is the head
     * when A's new jobs arrive (so A starts one step behind it), and B wins the following tie on
     * its lower id. Had B kept credit for its idle time — V falling back to 0 on the empty queue,
     * or B restarting from its own old tag — its 100 jobs would all come first.
     */
    @Nested
    class IdleTenantBanksNoCredit {

        private static final int LIMIT = 2;

        private static int longestRunOfReturningTenant(ClaimOrder order) {
            ReferenceFairQueue queue = new ReferenceFairQueue(order);
            queue.enqueue("B", 1);
            queue.enqueue("A", 500);
            assertThat(queue.claimAll()).hasSize(501);

            queue.enqueue("B", 100);
            queue.enqueue("A", 100);

            int longest = 0;
            int run = 0;
            while (queue.queuedCount("A") > 0) {
                boolean isB = queue.claim().orElseThrow().tenant().value().equals("B");
                run = isB ? run + 1 : 0;
                longest = Math.max(longest, run);
            }
            return longest;
        }

        @Test
        void returningTenantGetsNoBurstUnderFairOrdering() {
            assertThat(longestRunOfReturningTenant(FAIR)).isLessThanOrEqualTo(LIMIT);
        }

        @Test
        void returningTenantRestartsFromTheHighestTagHandedOutNotFromZero() {
            // The mechanism behind the scenario, shown on the tags themselves.
            ReferenceFairQueue queue = new ReferenceFairQueue(FAIR);
            queue.enqueue("B", 1);
            List<Job> flood = queue.enqueue("A", 500);
            queue.claimAll();
            double highest = flood.getLast().tag();

            assertThat(queue.virtualTime()).isEqualTo(highest).isEqualTo(501);
            assertThat(queue.enqueue("B", 1).getFirst().tag()).isEqualTo(highest + 1);
        }

        @Test
        void returningTenantBurstsUnderFifo() {
            assertThat(longestRunOfReturningTenant(FIFO)).isGreaterThan(LIMIT).isEqualTo(100);
        }
    }

    /**
     * (e) A inserts a delayed job (id 1), then 20 runnable jobs; B enqueues 20; five are claimed;
     * A's delayed job comes due and is promoted; A enqueues 5 more. Measured: how many pairs of A's
     * jobs are claimed in the opposite order from the one in which they became runnable.
     *
     * <p>"Its enqueue order" is the order its jobs became runnable: a delayed job or a retry that
     * comes back from scheduled joins the end of its tenant's line with a fresh tag (design decision
     * 6), even though its id is older than the backlog's.
     */
    @Nested
    class NewJobsNeverOvertakeTheTenantsOwnBacklog {

        private static int overtakes(ClaimOrder order) {
            ReferenceFairQueue queue = new ReferenceFairQueue(order);
            List<Long> runnableOrderOfA = new ArrayList<>();
            long delayed = queue.enqueueDelayed("A");
            queue.enqueue("A", 20).forEach(j -> runnableOrderOfA.add(j.id()));
            queue.enqueue("B", 20);
            List<Job> claimed = new ArrayList<>(queue.claim(5));
            runnableOrderOfA.add(queue.promote(delayed).id());
            queue.enqueue("A", 5).forEach(j -> runnableOrderOfA.add(j.id()));
            claimed.addAll(queue.claimAll());

            List<Integer> ranksInClaimOrder = claimed.stream()
                    .filter(j -> j.tenant().value().equals("A"))
                    .map(j -> runnableOrderOfA.indexOf(j.id()))
                    .toList();
            assertThat(ranksInClaimOrder).hasSize(26).doesNotContain(-1);
            int inversions = 0;
            for (int i = 0; i < ranksInClaimOrder.size(); i++) {
                for (int k = i + 1; k < ranksInClaimOrder.size(); k++) {
                    if (ranksInClaimOrder.get(i) > ranksInClaimOrder.get(k)) inversions++;
                }
            }
            return inversions;
        }

        @Test
        void tenantsJobsAreClaimedInTheOrderTheyBecameRunnableUnderFairOrdering() {
            assertThat(overtakes(FAIR)).isZero();
        }

        @Test
        void promotedOldJobJumpsTheTenantsBacklogUnderFifo() {
            // FIFO claims id 1 right after promotion, ahead of A's 15 still-queued older-runnable jobs.
            assertThat(overtakes(FIFO)).isPositive().isEqualTo(15);
        }
    }

    /** The fixture's own rules, so a scenario failure points at FairQueue and not at the model. */
    @Nested
    class TheReferenceModel {

        @Test
        void freshQueueHasVirtualTimeZero() {
            assertThat(new ReferenceFairQueue(FAIR).virtualTime()).isZero();
        }

        @Test
        void virtualTimeIsTheLowestQueuedTag() {
            ReferenceFairQueue queue = new ReferenceFairQueue(FAIR);
            queue.enqueue("A", 3); // tags 1, 2, 3
            queue.claim();
            assertThat(queue.virtualTime()).isEqualTo(2);
        }

        @Test
        void drainedQueueKeepsTheHighestTagHandedOut() {
            ReferenceFairQueue queue = new ReferenceFairQueue(FAIR).weight("B", 0.5);
            queue.enqueue("A", 3); // 1, 2, 3
            queue.enqueue("B", 2); // V = 1: 3, 5
            queue.claimAll();
            assertThat(queue.queuedCount()).isZero();
            assertThat(queue.virtualTime()).isEqualTo(5);
        }

        @Test
        void fairOrderBreaksTagTiesByLowerId() {
            ReferenceFairQueue queue = new ReferenceFairQueue(FAIR);
            List<Job> a = queue.enqueue("A", 2); // 1, 2
            List<Job> b = queue.enqueue("B", 1); // V = 1: 2
            assertThat(queue.claimAll()).containsExactly(a.get(0), a.get(1), b.get(0));
        }

        @Test
        void fifoOrderClaimsByIdWhateverTheTags() {
            ReferenceFairQueue queue = new ReferenceFairQueue(FIFO).weight("B", 1000);
            List<Job> a = queue.enqueue("A", 2);
            List<Job> b = queue.enqueue("B", 1);
            assertThat(b.get(0).tag()).isLessThan(a.get(1).tag());
            assertThat(queue.claimAll()).containsExactly(a.get(0), a.get(1), b.get(0));
        }

        @Test
        void delayedJobIsNotClaimableUntilPromoted() {
            ReferenceFairQueue queue = new ReferenceFairQueue(FAIR);
            long id = queue.enqueueDelayed("A");
            assertThat(queue.claim()).isEmpty();

            Job promoted = queue.promote(id);
            assertThat(promoted.id()).isEqualTo(id);
            assertThat(queue.claim()).contains(promoted);
            assertThatThrownBy(() -> queue.promote(id)).isInstanceOf(IllegalArgumentException.class);
        }

        @Test
        void everyJobIsClaimedExactlyOnceInBothOrders() {
            for (ClaimOrder order : ClaimOrder.values()) {
                ReferenceFairQueue queue = new ReferenceFairQueue(order).weight("B", 3);
                List<Job> enqueued = new ArrayList<>(queue.enqueue("A", 50));
                enqueued.addAll(queue.enqueue("B", 50));
                List<Job> claimed = queue.claimAll();

                Set<Job> distinct = new HashSet<>(claimed);
                assertThat(claimed).as(order.name()).hasSameSizeAs(distinct).containsExactlyInAnyOrderElementsOf(enqueued);
                assertThat(queue.claim()).isEmpty();
            }
        }
    }
}
