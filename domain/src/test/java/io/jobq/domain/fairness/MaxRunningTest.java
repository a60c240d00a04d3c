package io.jobq.domain.fairness;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class MaxRunningTest {

    @ParameterizedTest(name = "max_running {0}")
    @ValueSource(ints = {1, 2, 1000, MaxRunning.MAX})
    void aWholeNumberInRangeIsACap(int n) {
        assertThat(MaxRunning.of(n).value()).isEqualTo(n);
        assertThat(MaxRunning.of(BigDecimal.valueOf(n))).isEqualTo(MaxRunning.of(n));
    }

    @ParameterizedTest(name = "max_running {0}")
    @ValueSource(ints = {0, -1, MaxRunning.MAX + 1, Integer.MIN_VALUE, Integer.MAX_VALUE})
    void aNumberOutOfRangeIsRefusedNamingTheField(int n) {
        assertThatThrownBy(() -> MaxRunning.of(n)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("max_running must be 1-1000000 (or null for no cap), was " + n);
    }

    @ParameterizedTest(name = "max_running {0}")
    @ValueSource(strings = {"2.5", "0.9", "1e-1", "-3", "0", "1000001", "1e7", "1e2147483647", "1e-2147483647",
            "99999999999999999999999999999", "-1e9999"})
    void aDecimalThatIsNotAWholeNumberInRangeIsRefusedWithoutExpandingIt(String text) {
        BigDecimal exact = new BigDecimal(text);
        assertThatThrownBy(() -> MaxRunning.of(exact)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("max_running must be a whole number 1-1000000 (or null for no cap), was ");
    }

    @Test
    void trailingZerosOfAWholeNumberAreAccepted() {
        // 2.00 is the whole number 2; the HTTP layer refuses non-integer JSON before this, the Java API need not.
        assertThat(MaxRunning.of(new BigDecimal("2.00"))).isEqualTo(MaxRunning.of(2));
        assertThat(MaxRunning.of(new BigDecimal("1E+3"))).isEqualTo(MaxRunning.of(1000));
    }
}
