package io.jobq.application.port;

import io.jobq.domain.job.Job;
import io.jobq.domain.lease.FencingToken;
import java.util.Optional;

/**
 * The result of a write fenced by a {@link FencingToken} (complete, fail). A stale token is an
 * expected outcome, not an error: the worker must discard its result. A row another transaction holds is
 * expected too: the write waits for nobody, and the worker writes it again later.
 */
public sealed interface FencedWrite {
    /** The write applied; {@code job} is the row after it (done, scheduled or dead). */
    record Applied(Job job) implements FencedWrite {}

    /**
     * The row no longer carries the token (lease lost, job re-claimed, possibly by the same worker
     * id with a newer attempt): nothing changed. {@code current} is the row now, if it exists.
     */
    record Rejected(FencingToken presented, Optional<Job> current) implements FencedWrite {}

    /**
     * Another transaction holds the row (an application's open transaction that cancels the job, say), and
     * the write does not wait for it, so that one held row holds back no other run's outcome: nothing changed,
     * and the row still carried the token when looked at afterwards (or could not be looked at: the store
     * answers Held rather than fail the writes it applied beside this one). Write it again later; the fence
     * decides then.
     */
    record Held(FencingToken presented) implements FencedWrite {}

    default boolean applied() {
        return this instanceof Applied;
    }
}
