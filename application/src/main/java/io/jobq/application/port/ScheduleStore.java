package io.jobq.application.port;

import io.jobq.domain.job.JobId;
import io.jobq.domain.schedule.ScheduleName;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The store's part in cron schedules ({@link JobStore} extends it). Which tick is due is decided by the
 * caller ({@link io.jobq.application.schedule.CronSchedule#dueTick}); the store makes firing it exclusive:
 * {@link #fireSchedule} enqueues a tick's job at most once, however many worker processes try, because the
 * pair (schedule, tick) is unique in the store, not because one process leads.
 *
 * <p>Errors as {@link JobStore}'s: {@link StoreUnavailableException}, {@link JobQueueException}; a write
 * that throws changed nothing.
 */
public interface ScheduleStore {

    /**
     * Creates the schedule, or replaces its definition (a new revision). Its fired ticks are kept, so a
     * replaced schedule does not fire a tick again; no tick at or before this moment fires.
     *
     * @return the schedule as stored, and whether it was created
     */
    ScheduleWrite putSchedule(ScheduleDefinition definition);

    /** The schedule, if it exists. */
    Optional<Schedule> schedule(ScheduleName name);

    /**
     * A page of schedules in name order, each with its job and payload (up to 1 MiB): for listing them, never
     * on a path that runs every second (the firer reads {@link #scheduleTimings}). Rows a hand edit made
     * unreadable (a name or a payload the domain refuses) are left out. Like {@link JobStore#list}, a page ends
     * before the schedule whose payload (its JSON text, in chars) would take it past
     * {@link JobStore#LIST_PAGE_CHARS}, never before the first, so a page of large payloads stays a few MiB.
     *
     * @param after the page starts after this name (exclusive); {@code ""} for the first page
     * @param limit most rows read, at least 1
     * @return the page, and the {@code after} of the next page, present when more may follow (the page was full
     *     or ended at the budget)
     * @throws IllegalArgumentException if {@code limit} is below 1
     */
    SchedulePage schedules(String after, int limit);

    /**
     * A page of {@link #schedules}: {@code next} is the {@code after} of the next page, if there may be one (a plain
     * string, as {@link ScheduleTimings#next}'s).
     */
    record SchedulePage(List<Schedule> schedules, Optional<String> next) {
        public SchedulePage {
            schedules = List.copyOf(schedules);
            Objects.requireNonNull(next, "next");
        }
    }

    /**
     * One page of every schedule's timing (no job, no payload), in name order: the firer's read, bounded in
     * memory however many schedules there are and however large their payloads.
     *
     * @param after the page starts after this name (exclusive); {@code ""} for the first page
     * @param limit most rows read, at least 1
     * @return the readable timings among the rows read (a row a hand edit made unreadable is left out), and
     *     the {@code after} of the next page: present exactly when {@code limit} rows were read, readable or not
     * @throws IllegalArgumentException if {@code limit} is below 1
     */
    ScheduleTimings scheduleTimings(String after, int limit);

    /**
     * A page of {@link #scheduleTimings}: {@code next} is the {@code after} of the next page, if there may be one;
     * a plain string, since the last row read may carry a name the domain refuses (a hand-written {@code ..}).
     * Its timings leave out only unreadable names: a payload is not read, and one the domain refuses shows when
     * the schedule fires ({@link #fireSchedule} throws).
     */
    record ScheduleTimings(List<ScheduleTiming> timings, Optional<String> next) {
        public ScheduleTimings {
            timings = List.copyOf(timings);
            Objects.requireNonNull(next, "next");
        }
    }

    /** Deletes the schedule and its record of fired ticks (their jobs stay). @return whether it existed */
    boolean deleteSchedule(ScheduleName name);

    /**
     * Fires one tick, in one transaction: records (schedule, tick) as fired and enqueues the schedule's job
     * as {@link JobStore#enqueue} would. Fires nothing, and returns empty, when the schedule is gone, is at
     * another revision than {@code revision} (it was replaced since it was read), has already fired this
     * tick or a later one, or needs a row another transaction holds a while (a store may bound its wait: then
     * the tick, still due, fires on a later call).
     *
     * @param tick the instant the tick stands for (the job is enqueued now, runnable at once)
     * @return the enqueued job
     * @throws IllegalArgumentException if the stored job cannot be enqueued (a row written by hand)
     */
    Optional<JobId> fireSchedule(ScheduleName name, long revision, Instant tick);

    /** The store's clock ({@code now()}), against which every tick is judged. */
    Instant now();

    /** What {@link #putSchedule} did. */
    record ScheduleWrite(Schedule schedule, boolean created) {}
}
