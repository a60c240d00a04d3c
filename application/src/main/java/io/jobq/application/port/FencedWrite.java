package io.jobq.application.port;

import io.jobq.domain.job.Job;
import io.jobq.domain.lease.FencingToken;
import java.util.Optional;

/**
 * The result of a write fenced by a {@link FencingToken} (complete, fail). A stale token is an
 * expected outcome, not an error: the worker must discard its result.
 */
public sealed interface FencedWrite {
    /** The write applied; {@code job} is the row after it (done, scheduled or dead). */
    record Applied(Job job) implements FencedWrite {}

    /**
     * The row no longer carries the token (lease lost, job re-claimed, possibly by the same worker
     * id with a newer attempt): nothing changed. {@code current} is the row now, if it exists.
     */
    record Rejected(FencingToken presented, Optional<Job> current) implements FencedWrite {}

    default boolean applied() {
        return this instanceof Applied;
    }
}
