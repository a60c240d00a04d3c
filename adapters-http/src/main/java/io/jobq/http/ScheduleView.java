package io.jobq.http;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonRawValue;
import io.jobq.application.port.Schedule;
import io.jobq.application.schedule.CronSchedule;
import io.jobq.domain.job.JobId;
import java.time.Instant;
import java.util.List;

/**
 * A cron schedule as the API shows it; snake_case on the wire, instants ISO-8601 UTC.
 *
 * @param payload the job's payload, embedded JSON
 * @param revision a new, larger number at every PUT (a schedule deleted and created again included)
 * @param lastTick the latest tick fired (the instant it stands for), or null
 * @param lastJobId the job that tick enqueued, or null (it may since have been deleted by retention)
 * @param nextTick the next tick after now (this server's clock) and the latest fired, or null if none
 * @param error why the stored schedule does not fire (a row edited by hand that no longer parses); absent otherwise
 */
public record ScheduleView(
        String name,
        String cron,
        String timezone,
        String task,
        @JsonRawValue String payload,
        String tenant,
        String queue,
        int maxAttempts,
        long revision,
        Instant createdAt,
        Instant updatedAt,
        Instant lastTick,
        Long lastJobId,
        Instant nextTick,
        @JsonInclude(JsonInclude.Include.NON_NULL) String error) {

    /** The body of {@code GET /schedules}: a page, and the {@code after} of the next ({@code null} on the last). */
    public record ScheduleList(List<ScheduleView> schedules, String next) {}

    static ScheduleView of(Schedule s, Instant now) {
        Instant next = null;
        String error = null;
        try {
            CronSchedule cron = CronSchedule.read(s.cron(), CronSchedule.zone(s.timezone()));
            Instant since = s.since();
            next = cron.nextAfter(since.isAfter(now) ? since : now).orElse(null);
        } catch (RuntimeException e) { // a row that no longer parses, or a tick cron-utils cannot place
            error = e.getMessage();
        }
        return new ScheduleView(s.name().value(), s.cron(), s.timezone(), s.job().task().value(), s.job().payload(),
                s.job().tenant().value(), s.job().queue().value(), s.job().maxAttempts(), s.revision(), s.createdAt(),
                s.updatedAt(), s.lastTick().orElse(null), s.lastJob().map(JobId::value).orElse(null), next, error);
    }
}
