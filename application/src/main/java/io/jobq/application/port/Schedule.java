package io.jobq.application.port;

import io.jobq.domain.job.JobId;
import io.jobq.domain.schedule.ScheduleName;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * A stored cron schedule, as the store read it.
 *
 * @param cron the expression's text and {@code timezone} its zone id, as stored: a row written by hand may
 *     not parse, so readers read them ({@link io.jobq.application.schedule.CronSchedule#read}) and handle the error
 * @param job the job each tick enqueues
 * @param revision a new, larger number at every {@code PUT} (also when a deleted schedule is created again);
 *     a firer that read another revision fires nothing
 * @param createdAt when the schedule was created, by the store's clock
 * @param updatedAt when it was last set (created or replaced), by the store's clock; no tick at or before it fires
 * @param lastTick the latest tick fired, if any; ticks are fired in increasing order only
 * @param lastJob the job the latest tick enqueued (it may have been deleted since by retention)
 */
public record Schedule(ScheduleName name, String cron, String timezone, NewJob job, long revision, Instant createdAt,
        Instant updatedAt, Optional<Instant> lastTick, Optional<JobId> lastJob) {

    public Schedule {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(cron, "cron");
        Objects.requireNonNull(timezone, "timezone");
        Objects.requireNonNull(job, "job");
        Objects.requireNonNull(createdAt, "createdAt");
        Objects.requireNonNull(updatedAt, "updatedAt");
        Objects.requireNonNull(lastTick, "lastTick");
        Objects.requireNonNull(lastJob, "lastJob");
    }

    /** When its ticks fall and which fired last: what the firer reads. */
    public ScheduleTiming timing() {
        return new ScheduleTiming(name, cron, timezone, revision, updatedAt, lastTick);
    }

    /** The instant after which ticks are due: {@link ScheduleTiming#since}. */
    public Instant since() {
        return timing().since();
    }
}
