package io.jobq.domain.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class JobLimitsTest {
    @ParameterizedTest(name = "{0} s is {1} ms")
    @CsvSource({"0, 0", "0e999999999, 0", "-0.0, 0", "1.5, 1500", "0.0009, 0", "0.001, 1", "31536000, 31536000000",
            "3.1536E+7, 31536000000", "31536000.000, 31536000000"})
    void delaySecondsBecomeMillisecondsFinerDigitsDropped(String seconds, long millis) {
        assertThat(JobLimits.delayOfSeconds(new BigDecimal(seconds))).isEqualTo(Duration.ofMillis(millis));
    }

    @ParameterizedTest(name = "delay {0}")
    @ValueSource(strings = {"-1", "-0.001", "31536000.001", "1e9", "1e2147483647", "-1e2147483647"})
    void aDelayOutsideTheYearIsRefusedQuotingAShortValue(String seconds) {
        BigDecimal exact = new BigDecimal(seconds);
        assertThatThrownBy(() -> JobLimits.delayOfSeconds(exact)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("delay_seconds must be 0-31536000, was ")
                .satisfies(e -> assertThat(e.getMessage()).hasSizeLessThan(100));
    }

    @Test
    void aDurationDelayIsCheckedAgainstTheSameYear() {
        assertThat(JobLimits.requireDelay(JobLimits.MAX_DELAY)).isEqualTo(Duration.ofDays(365));
        assertThatThrownBy(() -> JobLimits.requireDelay(Duration.ofSeconds(Long.MAX_VALUE)))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("delay_seconds must be 0-31536000, was 9223372036854775807");
        assertThatThrownBy(() -> JobLimits.requireDelay(Duration.ofMillis(-1500)))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("delay_seconds must be 0-31536000, was -1.5");
    }

    @ParameterizedTest(name = "max_attempts {0}")
    @CsvSource({"1, 1", "100, 100", "3.0, 3", "5E+1, 50"})
    void maxAttemptsAreIntegersFrom1To100(String exact, int attempts) {
        assertThat(JobLimits.maxAttemptsOf(new BigDecimal(exact))).isEqualTo(attempts);
        assertThat(JobLimits.requireMaxAttempts(attempts)).isEqualTo(attempts);
    }

    @ParameterizedTest(name = "max_attempts {0}")
    @ValueSource(strings = {"0", "101", "1.5", "-1", "1e2147483647", "99999999999999999999"})
    void otherMaxAttemptsAreRefused(String exact) {
        BigDecimal value = new BigDecimal(exact);
        assertThatThrownBy(() -> JobLimits.maxAttemptsOf(value)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("max_attempts must be an integer 1-100, was ");
        assertThatThrownBy(() -> JobLimits.requireMaxAttempts(0)).hasMessage("max_attempts must be an integer 1-100, was 0");
    }

    @Test
    void idempotencyKeysHave1To255StorableCharacters() {
        assertThat(JobLimits.requireIdempotencyKey("k".repeat(255))).hasSize(255);
        assertThatThrownBy(() -> JobLimits.requireIdempotencyKey("")).hasMessage("idempotency_key must be 1-255 characters, was 0");
        assertThatThrownBy(() -> JobLimits.requireIdempotencyKey("k".repeat(256))).hasMessage("idempotency_key must be 1-255 characters, was 256");
        assertThatThrownBy(() -> JobLimits.requireIdempotencyKey("a\u0000")).hasMessageContaining("idempotency_key contains the NUL");
    }
}
