package io.jobq.domain.retry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.random.RandomGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class RetryPolicyTest {

    /** Always draws the top of the window, so the expected delay is the ceiling itself. */
    private static final RandomGenerator TOP = new RandomGenerator() {
        @Override
        public long nextLong() {
            return Long.MAX_VALUE;
        }

        @Override
        public long nextLong(long origin, long bound) {
            return bound - 1;
        }
    };

    private final RetryPolicy policy =
            new RetryPolicy(new BackoffPolicy(BackoffPolicy.DEFAULT_BASE, BackoffPolicy.DEFAULT_CAP, TOP));

    @ParameterizedTest(name = "attempt {0} of {1}, {2} -> {3}")
    @CsvSource(textBlock = """
            # attempt, max, kind,          decision (retry delay in ms at the top of the window, or the dead cause)
            1,         5,   ERROR,         1000
            3,         5,   TIMEOUT,       4000
            4,         5,   LEASE_EXPIRED, 8000
            5,         5,   ERROR,         OUT_OF_ATTEMPTS
            5,         5,   LEASE_EXPIRED, OUT_OF_ATTEMPTS
            5,         5,   TIMEOUT,       OUT_OF_ATTEMPTS
            1,         5,   PERMANENT,     PERMANENT_FAILURE
            1,         1,   PERMANENT,     PERMANENT_FAILURE
            1,         1,   ERROR,         OUT_OF_ATTEMPTS
            7,         5,   ERROR,         OUT_OF_ATTEMPTS
            11,        100, ERROR,         600000
            70,        100, LEASE_EXPIRED, 600000
            """)
    void decides(int attempt, int max, FailureKind kind, String expected) {
        RetryDecision decision = policy.decide(attempt, max, kind);
        if (expected.chars().allMatch(Character::isDigit)) {
            assertThat(decision).isEqualTo(new RetryDecision.RetryAfter(Duration.ofMillis(Long.parseLong(expected))));
        } else {
            assertThat(decision).isEqualTo(new RetryDecision.Dead(RetryDecision.Cause.valueOf(expected)));
        }
    }

    @Test
    void drawsNoDelayForAFinalFailure() {
        AtomicInteger draws = new AtomicInteger();
        RandomGenerator counting = new RandomGenerator() {
            @Override
            public long nextLong() {
                draws.incrementAndGet();
                return 0;
            }

            @Override
            public long nextLong(long origin, long bound) {
                draws.incrementAndGet();
                return origin;
            }
        };
        RetryPolicy counted = new RetryPolicy(new BackoffPolicy(Duration.ofSeconds(1), Duration.ofMinutes(1), counting));
        counted.decide(5, 5, FailureKind.ERROR);
        counted.decide(1, 5, FailureKind.PERMANENT);
        assertThat(draws).hasValue(0);
        counted.decide(1, 5, FailureKind.ERROR);
        assertThat(draws).hasValue(1);
    }

    @Test
    void refusesImpossibleAttempts() {
        assertThatThrownBy(() -> policy.decide(0, 5, FailureKind.ERROR)).hasMessage("attempt must be >= 1, was 0");
        assertThatThrownBy(() -> policy.decide(1, 0, FailureKind.ERROR)).hasMessage("maxAttempts must be >= 1, was 0");
    }

    @Test
    void aRetryDelayStaysWithinWhatAStoreCanWrite() {
        assertThatThrownBy(() -> new RetryDecision.RetryAfter(Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new RetryDecision.RetryAfter(BackoffPolicy.MAX_CAP.plusMillis(1)))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
