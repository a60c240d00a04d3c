package io.jobq.domain.fairness;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class FairQueueTest {

    /** Consecutive jobs of one tenant in the precision checks (the flood size the design must survive). */
    private static final int FLOOD = 10_000_000;

    @Nested
    class StartTag {

        @ParameterizedTest(name = "V {0}, L {1}, weight {2} -> {3}")
        @CsvSource(textBlock = """
                # V,      L,     weight,  start tag = max(V, L) + 1/weight
                # a new tenant on a fresh queue
                0,        0,     1,       1
                # the flood's own next job: L dominates (its backlog is ahead of V)
                1,        7,     1,       8
                # a late tenant: V dominates, it starts one step behind the head
                51,       0,     1,       52
                # an idle tenant returning: its old L is far behind V, so it banks nothing
                500,      3,     1,       501
                # V == L
                5,        5,     1,       6
                # weights scale the step, not the starting point
                5,        5,     2,       5.5
                100,      0,     4,       100.25
                0,        0,     0.5,     2
                10,       0,     0.001,   1010
                1e10,     0,     1000,    10000000000.001
                """)
        void isMaxOfVirtualTimeAndLastTagPlusOneOverWeight(double v, double l, double weight, double expected) {
            assertThat(FairQueue.startTag(v, l, TenantWeight.of(weight))).isEqualTo(expected);
        }

        @Test
        void isStrictlyAboveTheTenantsLastTagSoItsJobsKeepTheirOrder() {
            double tag = FairQueue.startTag(2, 9, TenantWeight.of(3));
            assertThat(tag).isGreaterThan(9).isCloseTo(9 + 1.0 / 3, within(1e-12));
        }

        @ParameterizedTest(name = "{0}")
        @ValueSource(doubles = {Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY})
        void nonFiniteVirtualTimeIsRejectedByName(double v) {
            assertThatThrownBy(() -> FairQueue.startTag(v, 0, TenantWeight.DEFAULT))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("queue virtual time must be finite, was " + v);
        }

        @ParameterizedTest(name = "{0}")
        @ValueSource(doubles = {Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY})
        void nonFiniteLastTagIsRejectedByName(double l) {
            assertThatThrownBy(() -> FairQueue.startTag(0, l, TenantWeight.DEFAULT))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("tenant last tag must be finite, was " + l);
        }

        @Test
        void nullWeightIsRejected() {
            assertThatNullPointerException().isThrownBy(() -> FairQueue.startTag(0, 0, null)).withMessage("weight");
        }

        @Test
        void tagThatCannotAdvanceThrowsInsteadOfRepeating() {
            // 2^53 + 1 rounds back to 2^53: handing out the same tag twice would let a tenant's
            // jobs swap places, so startTag must refuse instead.
            double twoTo53 = 0x1p53;
            assertThatThrownBy(() -> FairQueue.startTag(twoTo53, 0, TenantWeight.DEFAULT))
                    .isInstanceOf(ArithmeticException.class)
                    .hasMessageContaining("too large to advance");
        }

        @Test
        void tagThatWouldBecomeInfiniteThrows() {
            assertThatThrownBy(() -> FairQueue.startTag(Double.MAX_VALUE, 0, TenantWeight.of(TenantWeight.MIN)))
                    .isInstanceOf(ArithmeticException.class);
        }
    }

    /**
     * Tags are doubles: a step of 1/weight must stay above the spacing of doubles near the tag for
     * a tenant's tags to keep increasing. These loops hand one tenant 10 million consecutive tags
     * per weight. They use primitives only (no boxed lists of 10M tags) to stay around a second.
     */
    @Nested
    class Precision {

        private static final double[] WEIGHTS = {0.001, 0.01, 0.1, 1, 10, 100, 1000};

        @Test
        void tagsStayStrictlyIncreasingWhenTheTenantIsTheHeadOfTheQueue() {
            // V = L: the tenant alone in the queue, its own last tag is the queue's virtual time.
            for (double weight : WEIGHTS) {
                TenantWeight w = TenantWeight.of(weight);
                double last = 0;
                for (int i = 0; i < FLOOD; i++) {
                    double tag = FairQueue.startTag(last, last, w);
                    if (!(tag > last)) failNotIncreasing(weight, i, last, tag);
                    last = tag;
                }
                assertThat(last).as("weight %s", weight).isCloseTo(FLOOD / weight, within(FLOOD / weight * 1e-6));
            }
        }

        @Test
        void tagsStayStrictlyIncreasingWhileTheQueueVirtualTimeLagsBehind() {
            // V lags: the head of the queue is the tenant's tag from 1,000 jobs ago (its backlog),
            // and every so often V drops to 0 (another queue state); L must still win.
            for (double weight : WEIGHTS) {
                TenantWeight w = TenantWeight.of(weight);
                double step = 1 / weight;
                double last = 0;
                for (int i = 0; i < FLOOD; i++) {
                    double v = (i % 97 == 0) ? 0 : Math.max(0, last - 1_000 * step);
                    double tag = FairQueue.startTag(v, last, w);
                    if (!(tag > last)) failNotIncreasing(weight, i, last, tag);
                    last = tag;
                }
                assertThat(last).as("weight %s", weight).isCloseTo(FLOOD / weight, within(FLOOD / weight * 1e-6));
            }
        }

        @Test
        void heavyTenantStillAdvancesAfterALightTenantsFloodPushedVirtualTimeHigh() {
            // A weight-0.001 tenant's 10M-job flood reaches V = 1e10 (10M × 1000). A weight-1000
            // tenant arriving then advances by 0.001 per job at a magnitude where doubles are
            // spaced about 2e-6 apart: its tags must keep increasing, and by close to 0.001 each,
            // or its share of the workers would drift from its weight.
            TenantWeight heavy = TenantWeight.of(1000);
            double queueVirtualTime = 1e10;
            double first = FairQueue.startTag(queueVirtualTime, 0, heavy);
            double last = first;
            for (int i = 1; i < FLOOD; i++) {
                double tag = FairQueue.startTag(queueVirtualTime, last, heavy);
                if (!(tag > last)) failNotIncreasing(1000, i, last, tag);
                last = tag;
            }
            double advancedPerJob = (last - first) / (FLOOD - 1);
            assertThat(advancedPerJob).isCloseTo(0.001, within(0.001 * 0.01));
        }

        private static void failNotIncreasing(double weight, int job, double last, double tag) {
            throw new AssertionError("weight " + weight + ", job " + job + ": tag " + tag
                    + " is not above the previous tag " + last);
        }
    }
}
