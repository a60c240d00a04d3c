package io.jobq.domain.job;

import java.util.Locale;

/**
 * Where a job is in its life. Each constant says who moves a job out of it. The transitions are
 * enforced where they happen, by the stores' fenced writes (each names the state it moves from), not
 * by a table here that production would never consult.
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
