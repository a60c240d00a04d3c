package io.jobq.domain.retry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNoException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigInteger;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.random.RandomGenerator;
import java.util.random.RandomGeneratorFactory;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class BackoffPolicyTest {

    /** Draws per attempt in the bound checks: enough that an off-by-one at either end would show. */
    private static final int SAMPLES = 2_000;

    /** Attempts past the point where the ceiling stops doubling, including the int extremes. */
    private static final int[] HUGE_ATTEMPTS = {100, 1_000_000, Integer.MAX_VALUE};

    /** Seeded so a failure reproduces; the seed is in the assertion message when it matters. */
    private static RandomGenerator seeded(long seed) {
        return RandomGeneratorFactory.of("L64X128MixRandom").create(seed);
    }

    private static BackoffPolicy defaultsWithSeed(long seed) {
        return new BackoffPolicy(BackoffPolicy.DEFAULT_BASE, BackoffPolicy.DEFAULT_CAP, seeded(seed));
    }

    /** Attempts 1..64 followed by the huge ones. */
    private static int[] allCheckedAttempts() {
        return IntStream.concat(IntStream.rangeClosed(1, 64), IntStream.of(HUGE_ATTEMPTS)).toArray();
    }

    /**
     * Independent oracle for {@code min(cap, base · 2^(n-1))} in milliseconds, in exact integer
     * arithmetic. Beyond n = 200 the product exceeds any accepted cap (base >= 1 ms, cap <= 365 days
     * < 2^35 ms), so the cap is the answer without building a 2^(2^31)-bit number.
     */
    private static long expectedCeilingMs(long baseMs, long capMs, int attempt) {
        if (attempt > 200) return capMs;
        BigInteger product = BigInteger.valueOf(baseMs).shiftLeft(attempt - 1);
        return product.min(BigInteger.valueOf(capMs)).longValueExact();
    }

    @Nested
    class Ceiling {

        @ParameterizedTest(name = "attempt {0} -> ceiling {1} s")
        @CsvSource(textBlock = """
                # attempt,   ceiling in seconds (base 1 s, cap 10 min)
                1,           1
                2,           2
                3,           4
                4,           8
                10,          512
                11,          600
                12,          600
                63,          600
                64,          600
                65,          600
                100,         600
                1000000,     600
                2147483647,  600
                """)
        void workedNumbersForTheDefaults(int attempt, long ceilingSeconds) {
            assertThat(BackoffPolicy.defaults().ceiling(attempt)).isEqualTo(Duration.ofSeconds(ceilingSeconds));
        }

        @ParameterizedTest(name = "base {0} ms, cap {1} ms, attempt {2} -> {3} ms")
        @CsvSource(textBlock = """
                # base ms,  cap ms,       attempt,  ceiling ms
                # the cap is hit exactly (100·2^3 = 800) and then held:
                100,        800,          4,        800
                100,        800,          5,        800
                # a cap that is not a power-of-two multiple of the base is still used as is:
                100,        700,          3,        400
                100,        700,          4,        700
                # base == cap: every attempt waits up to the same ceiling
                5000,       5000,         1,        5000
                5000,       5000,         2147483647, 5000
                # the largest cap; base << 62 would overflow a long without the guard
                1,          31536000000,  35,       17179869184
                1,          31536000000,  36,       31536000000
                1,          31536000000,  63,       31536000000
                1,          31536000000,  64,       31536000000
                """)
        void workedNumbersForOtherPolicies(long baseMs, long capMs, int attempt, long ceilingMs) {
            BackoffPolicy policy = new BackoffPolicy(Duration.ofMillis(baseMs), Duration.ofMillis(capMs), seeded(1));
            assertThat(policy.ceiling(attempt)).isEqualTo(Duration.ofMillis(ceilingMs));
        }

        @Test
        void ceilingNeverDecreasesAndEndsAtTheCap() {
            BackoffPolicy policy = BackoffPolicy.defaults();
            Duration previous = Duration.ZERO;
            for (int attempt : allCheckedAttempts()) {
                Duration ceiling = policy.ceiling(attempt);
                assertThat(ceiling).as("attempt %d", attempt).isGreaterThanOrEqualTo(previous);
                previous = ceiling;
            }
            assertThat(previous).isEqualTo(BackoffPolicy.DEFAULT_CAP);
        }

        @Test
        void ceilingMatchesExactArithmeticForRandomPolicies() {
            // Property-style: random (base, cap, attempt) triples against the BigInteger oracle,
            // with attempts concentrated around the overflow guard (n - 1 near 63).
            RandomGenerator random = seeded(7);
            long maxCapMs = BackoffPolicy.MAX_CAP.toMillis();
            for (int i = 0; i < 20_000; i++) {
                long baseMs = random.nextBoolean() ? random.nextLong(1, 1_000) : random.nextLong(1, maxCapMs + 1);
                long capMs = random.nextLong(baseMs, maxCapMs + 1);
                int attempt = switch (random.nextInt(3)) {
                    case 0 -> random.nextInt(1, 80);
                    case 1 -> random.nextInt(55, 70);
                    default -> random.nextInt(1, Integer.MAX_VALUE) + 1;
                };
                BackoffPolicy policy = new BackoffPolicy(Duration.ofMillis(baseMs), Duration.ofMillis(capMs), random);

                assertThat(policy.ceiling(attempt).toMillis())
                        .as("base %d ms, cap %d ms, attempt %d", baseMs, capMs, attempt)
                        .isEqualTo(expectedCeilingMs(baseMs, capMs, attempt));
            }
        }

        @ParameterizedTest
        @ValueSource(ints = {0, -1, Integer.MIN_VALUE})
        void attemptBelowOneIsRejected(int attempt) {
            BackoffPolicy policy = BackoffPolicy.defaults();
            assertThatThrownBy(() -> policy.ceiling(attempt))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("attempt must be >= 1, was " + attempt);
            assertThatThrownBy(() -> policy.delay(attempt))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("attempt must be >= 1, was " + attempt);
        }
    }

    @Nested
    class Delay {

        @Test
        void delayStaysWithinZeroAndTheCeilingForEveryAttempt() {
            BackoffPolicy policy = defaultsWithSeed(11);
            for (int attempt : allCheckedAttempts()) {
                long ceilingMs = expectedCeilingMs(1_000, 600_000, attempt);
                for (int i = 0; i < SAMPLES; i++) {
                    long delayMs = policy.delay(attempt).toMillis();
                    if (delayMs < 0 || delayMs > ceilingMs) {
                        throw new AssertionError("attempt " + attempt + ": delay " + delayMs
                                + " ms outside [0, " + ceilingMs + "] ms (sample " + i + ")");
                    }
                }
            }
        }

        @Test
        void capIsRespectedForHugeAttempts() {
            BackoffPolicy policy = defaultsWithSeed(12);
            for (int attempt : HUGE_ATTEMPTS) {
                assertThatNoException().isThrownBy(() -> policy.delay(attempt));
                for (int i = 0; i < SAMPLES; i++) {
                    assertThat(policy.delay(attempt))
                            .as("attempt %d", attempt)
                            .isBetween(Duration.ZERO, BackoffPolicy.DEFAULT_CAP);
                }
            }
        }

        @Test
        void delayIsWholeMilliseconds() {
            // The store turns the delay into a PostgreSQL interval; sub-millisecond parts would be noise.
            BackoffPolicy policy = defaultsWithSeed(13);
            for (int i = 0; i < SAMPLES; i++) {
                assertThat(policy.delay(5).getNano() % 1_000_000).isZero();
            }
        }

        @ParameterizedTest(name = "attempt {0}")
        @ValueSource(ints = {1, 4, 10, 11, 64, Integer.MAX_VALUE})
        void delaysSpreadOverTheWholeWindow(int attempt) {
            // Full jitter means uniform on [0, ceiling]: check the spread, not just the bounds, so
            // a policy that always returned 0 or always the ceiling (no jitter) would fail here.
            BackoffPolicy policy = defaultsWithSeed(attempt);
            long ceilingMs = policy.ceiling(attempt).toMillis();
            Set<Long> distinct = new HashSet<>();
            long min = Long.MAX_VALUE;
            long max = Long.MIN_VALUE;
            double sum = 0;
            for (int i = 0; i < SAMPLES; i++) {
                long ms = policy.delay(attempt).toMillis();
                distinct.add(ms);
                min = Math.min(min, ms);
                max = Math.max(max, ms);
                sum += ms;
            }
            double mean = sum / SAMPLES;

            // 2,000 uniform draws from >= 1,001 values: about 870 distinct at worst (attempt 1).
            assertThat(distinct).hasSizeGreaterThan(SAMPLES / 4);
            // P(no draw in the lowest or highest 5%) = 0.95^2000, about 1e-45.
            assertThat(min).isLessThanOrEqualTo(ceilingMs / 20);
            assertThat(max).isGreaterThanOrEqualTo(ceilingMs - ceilingMs / 20);
            // The standard error of the mean is ceiling / sqrt(12 · 2000), about 0.6% of the
            // ceiling; 5% is a generous tolerance that still rules out a skewed distribution.
            assertThat(mean).isBetween(ceilingMs * 0.45, ceilingMs * 0.55);
        }

        @Test
        void bothEndsOfTheWindowAreReachable() {
            // Base = cap = 1 ms: the only delays are 0 and 1 ms, so an exclusive upper bound
            // (nextLong(0, ceiling) instead of ceiling + 1) or a lower bound of 1 would show at once.
            BackoffPolicy policy = new BackoffPolicy(Duration.ofMillis(1), Duration.ofMillis(1), seeded(14));
            Set<Duration> seen = new HashSet<>();
            for (int i = 0; i < SAMPLES; i++) seen.add(policy.delay(3));

            assertThat(seen).containsExactlyInAnyOrder(Duration.ZERO, Duration.ofMillis(1));
        }

        @Test
        void sameSeedGivesTheSameDelays() {
            // Tests rely on this to reproduce a failure; the policy must draw only from the injected generator.
            BackoffPolicy first = defaultsWithSeed(15);
            BackoffPolicy second = defaultsWithSeed(15);
            for (int attempt = 1; attempt <= 64; attempt++) {
                assertThat(first.delay(attempt)).isEqualTo(second.delay(attempt));
            }
        }

        @Test
        void largestCapDoesNotOverflow() {
            BackoffPolicy policy = new BackoffPolicy(Duration.ofMillis(1), BackoffPolicy.MAX_CAP, seeded(16));
            for (int attempt : new int[] {36, 63, 64, Integer.MAX_VALUE}) {
                for (int i = 0; i < SAMPLES; i++) {
                    assertThat(policy.delay(attempt)).isBetween(Duration.ZERO, BackoffPolicy.MAX_CAP);
                }
            }
        }
    }

    @Nested
    class Construction {

        @ParameterizedTest(name = "base {0}")
        @ValueSource(strings = {"PT0S", "PT-1S", "PT0.0005S", "PT-10000H"})
        void baseBelowOneMillisecondIsRejectedNamingBase(String base) {
            // Sub-millisecond bases are rejected, not rounded to 0: a 0 ms ceiling means no backoff at all.
            assertThatThrownBy(() -> new BackoffPolicy(Duration.parse(base), Duration.ofMinutes(1), seeded(1)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("backoff base must be >= 1 ms")
                    .hasMessageEndingWith("was " + Duration.parse(base));
        }

        @Test
        void capBelowBaseIsRejectedNamingCapAndBase() {
            assertThatThrownBy(() -> new BackoffPolicy(Duration.ofSeconds(10), Duration.ofSeconds(9), seeded(1)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("backoff cap must be >= base (PT10S), was PT9S");
        }

        @Test
        void capAbove365DaysIsRejectedNamingCap() {
            Duration tooLong = BackoffPolicy.MAX_CAP.plusMillis(1);
            assertThatThrownBy(() -> new BackoffPolicy(Duration.ofSeconds(1), tooLong, seeded(1)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("backoff cap must be <= PT8760H, was " + tooLong);
        }

        @Test
        void boundaryValuesAreAccepted() {
            assertThatNoException().isThrownBy(() -> new BackoffPolicy(Duration.ofMillis(1), Duration.ofMillis(1), seeded(1)));
            assertThatNoException().isThrownBy(() -> new BackoffPolicy(Duration.ofSeconds(1), BackoffPolicy.MAX_CAP, seeded(1)));
            assertThatNoException().isThrownBy(() -> new BackoffPolicy(BackoffPolicy.MAX_CAP, BackoffPolicy.MAX_CAP, seeded(1)));
        }

        @Test
        void nullComponentsAreRejectedByName() {
            assertThatNullPointerException()
                    .isThrownBy(() -> new BackoffPolicy(null, Duration.ofSeconds(1), seeded(1)))
                    .withMessage("base");
            assertThatNullPointerException()
                    .isThrownBy(() -> new BackoffPolicy(Duration.ofSeconds(1), null, seeded(1)))
                    .withMessage("cap");
            assertThatNullPointerException()
                    .isThrownBy(() -> new BackoffPolicy(Duration.ofSeconds(1), Duration.ofSeconds(1), null))
                    .withMessage("random");
        }

        @Test
        void defaultsAreOneSecondAndTenMinutes() {
            BackoffPolicy defaults = BackoffPolicy.defaults();
            assertThat(defaults.base()).isEqualTo(Duration.ofSeconds(1));
            assertThat(defaults.cap()).isEqualTo(Duration.ofMinutes(10));
        }
    }
}
