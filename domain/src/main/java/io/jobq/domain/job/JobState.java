package io.jobq.domain.job;

import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;

/**
 * Where a job is in its life. Each constant says who moves a job out of it; {@link #canMoveTo}
 * is the whole transition table and {@link #moveTo} refuses everything else.
 *
 * <pre>
 * scheduled ──promotion──▶ queued ──claim──▶ running ──complete──▶ done
 *     ▲                                        │
 *     └── fail (retryable) / lease expired ────┼──▶ dead (permanent, or out of attempts)
 * dead ──manual retry──▶ queued
 * </pre>
 *
 * The stored form is the lower-case name ({@link #dbName()}), also used in the HTTP API.
 */
public enum JobState {
    /** Waiting for its {@code run_at}: a delayed job or a retry backing off. Maintenance promotes it to queued. */
    SCHEDULED,
    /** Runnable, ordered by virtual time. A worker's claim moves it to running. */
    QUEUED,
    /**
     * Leased to one worker until its lease expiry. The worker completes or fails it; if the lease
     * lapses first, maintenance reaps it to scheduled or dead.
     */
    RUNNING,
    /** Finished successfully. Terminal. */
    DONE,
    /** Failed permanently or out of attempts. Only an operator's retry moves it (to queued). */
    DEAD;

    private static final Set<JobState> FROM_SCHEDULED = EnumSet.of(QUEUED);
    private static final Set<JobState> FROM_QUEUED = EnumSet.of(RUNNING);
    private static final Set<JobState> FROM_RUNNING = EnumSet.of(DONE, SCHEDULED, DEAD);
    private static final Set<JobState> FROM_DONE = EnumSet.noneOf(JobState.class);
    private static final Set<JobState> FROM_DEAD = EnumSet.of(QUEUED);

    /** The states a job may move to from this one; empty for {@link #DONE}. */
    public Set<JobState> successors() {
        return EnumSet.copyOf(switch (this) {
            case SCHEDULED -> FROM_SCHEDULED;
            case QUEUED -> FROM_QUEUED;
            case RUNNING -> FROM_RUNNING;
            case DONE -> EnumSet.noneOf(JobState.class);
            case DEAD -> FROM_DEAD;
        });
    }

    /** Whether the table allows {@code this → next}. A state never moves to itself. */
    public boolean canMoveTo(JobState next) {
        return switch (this) {
            case SCHEDULED -> FROM_SCHEDULED.contains(next);
            case QUEUED -> FROM_QUEUED.contains(next);
            case RUNNING -> FROM_RUNNING.contains(next);
            case DONE -> FROM_DONE.contains(next);
            case DEAD -> FROM_DEAD.contains(next);
        };
    }

    /**
     * Returns {@code next} if {@code this → next} is legal.
     *
     * @throws IllegalStateTransitionException if the table does not allow it
     */
    public JobState moveTo(JobState next) {
        if (!canMoveTo(next)) throw new IllegalStateTransitionException(this, next);
        return next;
    }

    /** Whether no transition leads out of this state. */
    public boolean isTerminal() {
        return this == DONE;
    }

    /** The stored and wire form: {@code "scheduled"}, {@code "queued"}, … */
    public String dbName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * Parses the stored or wire form.
     *
     * @throws IllegalArgumentException naming the accepted values if {@code name} is none of them
     */
    public static JobState fromDbName(String name) {
        for (JobState s : values()) {
            if (s.dbName().equals(name)) return s;
        }
        throw new IllegalArgumentException(
                "status must be one of scheduled, queued, running, done, dead, was \"" + name + "\"");
    }
}
