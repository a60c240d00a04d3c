package io.jobq.domain.fairness;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class TenantWeightTest {

    @Nested
    class Validation {

        @ParameterizedTest(name = "weight {0}")
        @ValueSource(doubles = {0.0, -0.0, -1.0, -0.001, -Double.MAX_VALUE, Double.NaN,
                Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY})
        void weightThatIsNotPositiveAndFiniteIsRejected(double weight) {
            assertThatThrownBy(() -> new TenantWeight(weight))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("weight must be a positive finite number, was " + weight);
        }

        @ParameterizedTest(name = "weight {0}")
        @ValueSource(doubles = {Double.MIN_VALUE, 1e-310, 5e-309, 1e-9, 9.99e-7})
        void weightBelowTheMinimumIsRejectedSayingSo(double weight) {
            // Positive and finite, so "must be positive" would be a confusing message: the step 1/weight
            // is so large (or infinite) that tags would leave double precision within a few jobs.
            assertThatThrownBy(() -> TenantWeight.of(weight))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("weight is too small: must be >= 1.0E-6, was " + weight);
        }

        @ParameterizedTest(name = "weight {0}")
        @ValueSource(doubles = {1.000001e6, 1e300, Double.MAX_VALUE})
        void weightAboveTheMaximumIsRejectedSayingSo(double weight) {
            // A step of 1e-300 would not move any realistic virtual time: the tenant's tags would stall.
            assertThatThrownBy(() -> TenantWeight.of(weight))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("weight is too large: must be <= 1000000.0, was " + weight);
        }

        @ParameterizedTest(name = "weight {0}")
        @ValueSource(doubles = {1e-6, 0.001, 1, 3, 1000, 10_000, 1e6})
        void weightInRangeIsAccepted(double weight) {
            TenantWeight accepted = TenantWeight.of(weight);
            assertThat(accepted.value()).isEqualTo(weight);
            assertThat(accepted.step()).isFinite().isPositive();
        }
    }

    /** From an exact decimal, as the HTTP API reads it: judged before it becomes a double, never printed in full. */
    @Nested
    class FromDecimal {
        @ParameterizedTest(name = "weight {0}")
        @ValueSource(strings = {"0.000001", "0.0000010000", "1", "3.5", "1e6", "1000000.000"})
        void theDomainsRangeIsAcceptedExactly(String weight) {
            assertThat(TenantWeight.of(new BigDecimal(weight)).value()).isEqualTo(new BigDecimal(weight).doubleValue());
        }

        @ParameterizedTest(name = "weight {0}")
        @ValueSource(strings = {"0", "-1", "1e-7", "0.00000099999999999999999999", "1e-400", "1000000.0000000001",
                "1e2147483647", "-1e2147483647", "1e-2147483647"})
        void outsideTheRangeIsRefusedQuotingAShortValue(String weight) {
            BigDecimal exact = new BigDecimal(weight);
            assertThatThrownBy(() -> TenantWeight.of(exact))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("weight must be 0.000001-1000000, was ")
                    .satisfies(e -> assertThat(e.getMessage()).hasSizeLessThan(120));
        }
    }

    @Nested
    class Step {

        @ParameterizedTest(name = "weight {0} -> step {1}")
        @CsvSource(textBlock = """
                # weight, virtual time one job costs
                1,        1
                2,        0.5
                4,        0.25
                0.5,      2
                0.001,    1000
                1000,     0.001
                """)
        void stepIsOneOverWeight(double weight, double step) {
            assertThat(TenantWeight.of(weight).step()).isEqualTo(step);
        }

        @Test
        void defaultWeightIsOne() {
            assertThat(TenantWeight.DEFAULT).isEqualTo(TenantWeight.of(1));
            assertThat(TenantWeight.DEFAULT.step()).isEqualTo(1.0);
        }
    }
}
