package io.jobq.domain.fairness;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
        @ValueSource(doubles = {Double.MIN_VALUE, 1e-310, 5e-309})
        void weightSoSmallThatOneOverItOverflowsIsRejectedSayingSo(double weight) {
            // These are positive and finite, so "must be positive" would be a confusing message:
            // the problem is the step 1/weight, which is infinite and would make every tag infinite.
            assertThat(1.0 / weight).isInfinite();
            assertThatThrownBy(() -> TenantWeight.of(weight))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("weight is too small: 1/weight must be finite, was " + weight);
        }

        @ParameterizedTest(name = "weight {0}")
        @ValueSource(doubles = {6e-309, Double.MIN_NORMAL, 0.001, 1, 3, 1000, Double.MAX_VALUE})
        void positiveWeightWithFiniteStepIsAccepted(double weight) {
            TenantWeight accepted = TenantWeight.of(weight);
            assertThat(accepted.value()).isEqualTo(weight);
            assertThat(accepted.step()).isFinite().isPositive();
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
