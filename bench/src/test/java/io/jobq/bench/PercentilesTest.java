package io.jobq.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class PercentilesTest {

    @Nested
    class NearestRank {
        // The textbook example: 15, 20, 35, 40, 50.
        @ParameterizedTest
        @CsvSource({"5, 15", "30, 20", "40, 20", "50, 35", "95, 50", "100, 50"})
        void picksTheSampleAtRankCeilPTimesN(double p, double expected) {
            assertThat(Percentiles.of(40, 15, 50, 35, 20).p(p)).isEqualTo(expected);
        }

        @Test
        void p95OfTwentySamplesIsTheNineteenthNotTheTwentieth() {
            double[] samples = new double[20];
            for (int i = 0; i < 20; i++) samples[i] = i + 1;
            // 0.95 × 20 = 19 exactly; a floating-point ceil must not push it to 20.
            assertThat(Percentiles.of(samples).p95()).isEqualTo(19);
        }

        @Test
        void isAlwaysOneOfTheSamplesNeverAnInterpolation() {
            Percentiles p = Percentiles.of(List.of(1.0, 2.0, 3.0, 4.0));
            assertThat(p.p50()).isEqualTo(2.0); // interpolation would give 2.5
            assertThat(p.max()).isEqualTo(4.0);
            assertThat(p.min()).isEqualTo(1.0);
            assertThat(p.count()).isEqualTo(4);
        }

        @Test
        void medianOfThreeRunsIsTheMiddleOne() {
            assertThat(Percentiles.median(1363, 222, 762)).isEqualTo(762);
        }
    }

    @Test
    void refusesNoSamplesAndOutOfRangePercentiles() {
        assertThatThrownBy(() -> Percentiles.of(new double[0])).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Percentiles.of(1, 2).p(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Percentiles.of(1, 2).p(101)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Percentiles.of(1, Double.NaN)).isInstanceOf(IllegalArgumentException.class);
    }
}
