package io.jobq.domain.job;

import java.util.Locale;

/**
 * Where a job is in its life. Each constant says who moves a job out of it. The transitions are
 * enforced where they happen, by the stores' fenced writes (each names the state it moves from), not
 * by a table here that production would never consult.
 *
 * <pre>
 * scheduled ──promotion──▶ queued ──claim──▶ running ──complete──▶ done
 *     ▲          │             ▲                │
 *     │          ▼ (capped)    │ (a run ends)   │
 *     │         held ──────────┘                │
 *     └── fail (retryable) / lease expired ─────┼──▶ dead (permanent, or out of attempts)
 * dead ──manual retry──▶ queued (or held)
 * scheduled, queued, held ──cancel──▶ cancelled; running ──cancel asked, run ends without success──▶ cancelled
 * </pre>
 *
 * A job of a tenant with a cap ({@code max_running}) in its queue becomes queued only while the tenant's
 * queued and running jobs there are fewer than the cap; otherwise it is held (see {@link #HELD}).
 *
 * The stored form is the lower-case name ({@link #dbName()}), also used in the HTTP API.
 */
public enum JobState {
    /** Waiting for its {@code run_at}: a delayed job or a retry backing off. Maintenance promotes it to queued. */
    SCHEDULED,
    /** Runnable, ordered by virtual time. A worker's claim moves it to running. */
    QUEUED,
    /**
     * Runnable, but its tenant is at its cap in this queue ({@code max_running} of its jobs queued or
     * running): it waits, with no start tag, where claims never look. When one of the tenant's runs ends
     * (or the cap is raised or removed) the store releases held jobs, oldest first, to queued, each with a
     * fresh fair start tag, as promotion does for scheduled jobs.
     */
    HELD,
    /**
     * Leased to one worker until its lease expiry. The worker completes or fails it; if the lease
     * lapses first, maintenance reaps it to scheduled or dead.
     */
    RUNNING,
    /** Finished successfully. Terminal. */
    DONE,
    /** Failed permanently or out of attempts. Only an operator's retry moves it (to queued). */
    DEAD,
    /**
     * Cancelled by request: at once if it was not running; if it was, when its run ended other than in
     * success (a run that succeeds despite the request is done, its result kept). Terminal.
     */
    CANCELLED;

    /** Whether the job has ended: done, dead or cancelled (only an operator's retry moves a dead one again). */
    public boolean isFinal() {
        return this == DONE || this == DEAD || this == CANCELLED;
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
                "status must be one of scheduled, queued, held, running, done, dead, cancelled, was \"" + name + "\"");
    }
}
