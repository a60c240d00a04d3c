package io.jobq.application.port;

import io.jobq.domain.job.JobId;
import io.jobq.domain.lease.FencingToken;
import io.jobq.domain.retry.RetryDecision;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * One run's outcome, to be written fenced by its token: what {@link JobStore#complete} or
 * {@link JobStore#fail} write, as a value, so that a worker can hand a batch of them to
 * {@link JobStore#recordOutcomes} and commit them together.
 */
public sealed interface OutcomeWrite {
    /** The run this outcome belongs to: the write applies only while the row still carries it. */
    FencingToken token();

    /**
     * How long the handler ran, as the worker measured it; empty when unknown. A work-fairness queue
     * charges the tenant this instead of the run's estimate ({@link JobStore#configureQueue}).
     */
    Optional<Duration> ran();

    /** @throws IllegalArgumentException naming the first job that appears twice in {@code writes} */
    static void requireDistinctJobs(List<OutcomeWrite> writes) {
        Set<JobId> seen = new HashSet<>();
        for (OutcomeWrite w : writes) {
            if (!seen.add(w.token().job())) {
                throw new IllegalArgumentException("writes holds job " + w.token().job().value() + " twice");
            }
        }
    }

    /** The run succeeded; {@code resultJson} is stored as {@link JobStore#complete} describes. */
    record Complete(FencingToken token, Optional<String> resultJson, Optional<Duration> ran) implements OutcomeWrite {
        public Complete {
            Objects.requireNonNull(token, "token");
            Objects.requireNonNull(resultJson, "resultJson");
            ran = requireNotNegative(ran);
        }

        /** A success whose run time is unknown. */
        public Complete(FencingToken token, Optional<String> resultJson) {
            this(token, resultJson, Optional.empty());
        }
    }

    /** The run failed; the job becomes what {@code decision} says, as {@link JobStore#fail} describes. */
    record Fail(FencingToken token, String error, RetryDecision decision, Optional<Duration> ran) implements OutcomeWrite {
        public Fail {
            Objects.requireNonNull(token, "token");
            Objects.requireNonNull(decision, "decision");
            error = error == null ? "" : error;
            ran = requireNotNegative(ran);
        }

        /** A failure whose run time is unknown. */
        public Fail(FencingToken token, String error, RetryDecision decision) {
            this(token, error, decision, Optional.empty());
        }
    }

    private static Optional<Duration> requireNotNegative(Optional<Duration> ran) {
        Objects.requireNonNull(ran, "ran");
        if (ran.filter(Duration::isNegative).isPresent()) throw new IllegalArgumentException("ran must not be negative, was " + ran.get());
        return ran;
    }
}
