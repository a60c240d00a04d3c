package io.jobq.application.port;

import io.jobq.application.schedule.CronSchedule;
import io.jobq.domain.schedule.ScheduleName;
import java.util.Objects;

/**
 * What {@code PUT /schedules/{name}} sets: a cron schedule and the job each of its ticks enqueues.
 *
 * @param cron the expression, already parsed in its time zone (so a stored schedule always parses)
 * @param job the job enqueued at each tick: tenant, queue, task, payload and attempt budget; runnable at once
 *     (no delay) and without an idempotency key (the tick itself is the schedule's unit of uniqueness)
 */
public record ScheduleDefinition(ScheduleName name, CronSchedule cron, NewJob job) {
    /** @throws IllegalArgumentException if {@code job} has a delay or an idempotency key */
    public ScheduleDefinition {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(cron, "cron");
        Objects.requireNonNull(job, "job");
        if (!job.delay().isZero()) throw new IllegalArgumentException("a schedule's job cannot have a delay: its tick is its start");
        if (job.idempotencyKey().isPresent()) {
            throw new IllegalArgumentException("a schedule's job cannot have an idempotency key: each tick enqueues one job");
        }
    }
}
