package io.jobq.domain.retry;

import java.time.Duration;
import java.util.Objects;

/**
 * What becomes of a job after a failed attempt, as {@link RetryPolicy} decided it. A store writes exactly
 * this: {@link RetryAfter} → scheduled at the store's {@code now() + delay}; {@link Dead} → dead now.
 */
public sealed interface RetryDecision {

    /** Try again once {@code delay} has passed, counted from the store's clock when it records the failure. */
    record RetryAfter(Duration delay) implements RetryDecision {
        /** @throws IllegalArgumentException if {@code delay} is negative or above {@link BackoffPolicy#MAX_CAP} */
        public RetryAfter {
            Objects.requireNonNull(delay, "delay");
            if (delay.isNegative() || delay.compareTo(BackoffPolicy.MAX_CAP) > 0) {
                throw new IllegalArgumentException("retry delay must be 0-" + BackoffPolicy.MAX_CAP + ", was " + delay);
            }
        }
    }

    /** No more attempts: the job is dead, for {@code cause}. */
    record Dead(Cause cause) implements RetryDecision {
        public Dead {
            Objects.requireNonNull(cause, "cause");
        }
    }

    /** Why a job is dead. */
    enum Cause {
        /** The failure was {@link FailureKind#PERMANENT}. */
        PERMANENT_FAILURE("permanent failure"),
        /** The failed attempt was the last of {@code max_attempts}. */
        OUT_OF_ATTEMPTS("out of attempts");

        private final String description;

        Cause(String description) {
            this.description = description;
        }

        /** A few words for logs: "permanent failure", "out of attempts". */
        public String description() {
            return description;
        }
    }
}
