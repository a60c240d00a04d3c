package io.jobq.application.fake;

import io.jobq.application.port.JobStore;
import io.jobq.application.port.NewJob;
import io.jobq.application.port.Schedule;
import io.jobq.application.port.ScheduleDefinition;
import io.jobq.application.port.ScheduleStore.SchedulePage;
import io.jobq.application.port.ScheduleStore.ScheduleTimings;
import io.jobq.application.port.ScheduleStore.ScheduleWrite;
import io.jobq.application.port.ScheduleTiming;
import io.jobq.domain.job.JobId;
import io.jobq.domain.schedule.ScheduleName;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * {@link InMemoryJobStore}'s schedules, as schema V9 keeps them: one row per schedule, and the set of fired
 * (schedule, tick) pairs that refuses a tick twice. Not thread-safe: the store calls it under its lock.
 */
final class InMemorySchedules {
    private record Tick(String schedule, Instant at) {}

    private final TreeMap<String, Schedule> rows = new TreeMap<>();
    private final Set<Tick> fired = new HashSet<>();
    /** As schema V9's sequence: revisions are never reused, not even by a schedule created again. */
    private long revisions;

    ScheduleWrite put(ScheduleDefinition d, Instant now) {
        Schedule before = rows.get(d.name().value());
        Schedule after = new Schedule(d.name(), d.cron().expression(), d.cron().zone().getId(), d.job(),
                ++revisions, before == null ? now : before.createdAt(), now,
                before == null ? Optional.empty() : before.lastTick().map(t -> t.isAfter(now) ? now : t),
                before == null ? Optional.empty() : before.lastJob());
        rows.put(d.name().value(), after);
        return new ScheduleWrite(after, before == null);
    }

    Optional<Schedule> get(ScheduleName name) {
        return Optional.ofNullable(rows.get(name.value()));
    }

    /** As ScheduleTable.page: name order after {@code after}, ending at {@link JobStore#LIST_PAGE_CHARS} of payloads. */
    SchedulePage page(String after, int limit) {
        List<Schedule> page = new ArrayList<>();
        long chars = 0;
        for (Schedule s : rows.tailMap(after, false).values()) {
            chars += s.job().payload().length();
            if (!page.isEmpty() && chars > JobStore.LIST_PAGE_CHARS) return new SchedulePage(page, Optional.of(page.getLast().name().value()));
            page.add(s);
            if (page.size() == limit) return new SchedulePage(page, Optional.of(s.name().value()));
        }
        return new SchedulePage(page, Optional.empty());
    }

    /** As ScheduleTable.timings: name order, after {@code after}; the fake holds no unreadable rows. */
    ScheduleTimings timings(String after, int limit) {
        List<ScheduleTiming> page = rows.tailMap(after, false).values().stream().limit(limit).map(Schedule::timing).toList();
        return new ScheduleTimings(page, page.size() == limit ? Optional.of(page.getLast().name().value()) : Optional.empty());
    }

    boolean delete(ScheduleName name) {
        fired.removeIf(t -> t.schedule().equals(name.value()));
        return rows.remove(name.value()) != null;
    }

    /** As ScheduleTable.fire: forward only, at the revision read, after the last change, each tick once. */
    Optional<JobId> fire(ScheduleName name, long revision, Instant tick, Function<NewJob, JobId> enqueue) {
        Schedule s = rows.get(name.value());
        if (s == null || s.revision() != revision || !tick.isAfter(s.updatedAt())
                || s.lastTick().filter(last -> !last.isBefore(tick)).isPresent()) {
            return Optional.empty();
        }
        if (!fired.add(new Tick(name.value(), tick))) return Optional.empty();
        JobId job = enqueue.apply(s.job());
        rows.put(name.value(), new Schedule(s.name(), s.cron(), s.timezone(), s.job(), s.revision(), s.createdAt(),
                s.updatedAt(), Optional.of(tick), Optional.of(job)));
        return Optional.of(job);
    }
}
