package io.jobq.application.worker;

import io.jobq.application.port.JobStore;
import io.jobq.application.port.ScheduleStore;
import io.jobq.application.port.ScheduleTiming;
import io.jobq.application.schedule.CronSchedule;
import io.jobq.domain.job.JobId;
import io.jobq.domain.lease.WorkerId;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Fires cron schedules, on its own thread in every worker whose maintenance is enabled. Each pass reads
 * the store's clock and every schedule's timing, page by page (never the jobs they enqueue), fires each
 * one's due tick ({@link CronSchedule#dueTick}: the latest tick since it last fired, so an outage costs one
 * run, not a burst) and sleeps until the earliest next tick, at most {@link #MAX_PAUSE} so that a new or
 * changed schedule is seen within a second. Every worker fires; {@link JobStore#fireSchedule} lets one job
 * per tick through, so more workers only mean more attempts that find the tick taken.
 *
 * <p>Ticks are judged by the store's clock and the pause is a difference of two readings of it, so a worker
 * whose own clock is off fires on time all the same. A stored schedule whose cron or time zone no longer
 * parses (a hand edit) is logged at WARN once and skipped; one whose last tick is ahead of the clock waits for
 * it, silently (up to {@code infinity}: for ever); a failed read or fire is reported
 * and tried again at the next pass, after {@link OutageBackoff}'s pause when the store is down.
 */
final class ScheduleFirer {
    private static final Logger log = LoggerFactory.getLogger(ScheduleFirer.class);

    /** The longest pause between passes: how soon a new schedule or a changed one is seen. */
    static final Duration MAX_PAUSE = Duration.ofSeconds(1);
    /** Schedules read per page: at most this many timings are in memory at once (a few hundred bytes each). */
    static final int PAGE = 500;
    /** The shortest pause, so a schedule due again at once cannot spin the thread. */
    static final Duration MIN_PAUSE = Duration.ofMillis(10);
    /** How far past a tick to wake: the next pass then reads a clock that has reached it. */
    static final Duration PAST_TICK = Duration.ofMillis(2);


    private final JobStore store;
    private final WorkerId worker;
    private final WakeSignal claimSignal;
    private final ErrorReporter errors;
    private final StopLatch stop;
    private final OutageBackoff outage;
    /**
     * Parsed expressions by their text and time zone (not by name and revision: a row edited by hand keeps
     * its revision), empty for those that do not parse; kept while some schedule uses them.
     */
    private final Map<String, Optional<CronSchedule>> parsed = new HashMap<>();
    /** Schedules (name and revision) whose job the store refused to enqueue: reported once, kept while they last. */
    private final Set<String> refused = new HashSet<>();

    ScheduleFirer(JobStore store, WorkerId worker, WakeSignal claimSignal, ErrorReporter errors, StopLatch stop,
            OutageBackoff outage) {
        this.store = store;
        this.worker = worker;
        this.claimSignal = claimSignal;
        this.errors = errors;
        this.stop = stop;
        this.outage = outage;
    }

    /** The firing loop; returns once {@code stop} is thrown. */
    void loop() {
        Duration pause = Duration.ZERO;
        while (!stop.pause(pause)) {
            pause = pass();
        }
    }

    /**
     * One pass: fires what is due, reading the schedules' timings a page of {@link #PAGE} at a time (never
     * their payloads: see {@link ScheduleTiming}). @return how long to pause before the next
     */
    Duration pass() {
        Instant now;
        try {
            now = store.now();
        } catch (Throwable e) {
            errors.maintenanceError("read schedules", e);
            return outage.next();
        }
        Instant horizon = now.plus(MAX_PAUSE);
        Instant wake = horizon;
        Set<String> inUse = new HashSet<>();
        Set<String> revisions = new HashSet<>();
        for (Optional<String> after = Optional.of(""); after.isPresent(); ) {
            ScheduleStore.ScheduleTimings page;
            try {
                page = store.scheduleTimings(after.get(), PAGE);
            } catch (Throwable e) {
                // the pages read so far have fired; the rest wait for the next pass, like every schedule on a failed read
                errors.maintenanceError("read schedules", e);
                return outage.next();
            }
            for (ScheduleTiming s : page.timings()) {
                inUse.add(key(s));
                revisions.add(revisionKey(s));
                Instant next = fireIfDue(s, now, horizon);
                if (next.isBefore(wake)) wake = next;
            }
            after = page.next();
        }
        outage.reset();
        parsed.keySet().retainAll(inUse);
        refused.retainAll(revisions);
        Duration pause = Duration.between(now, wake).plus(PAST_TICK);
        return pause.compareTo(MIN_PAUSE) < 0 ? MIN_PAUSE : pause.compareTo(MAX_PAUSE) > 0 ? MAX_PAUSE : pause;
    }

    /** Fires {@code s}'s due tick, if any. @return its next tick, or {@code horizon} if none comes before it */
    private Instant fireIfDue(ScheduleTiming s, Instant now, Instant horizon) {
        Optional<CronSchedule> cron = parse(s);
        if (cron.isEmpty()) return horizon;
        try {
            Instant since = s.since();
            // Waiting for a moment beyond this pass (a last tick set ahead by hand, up to infinity, or by a clock
            // set back): nothing is due and its next tick cannot come before the pass ends.
            if (since.isAfter(horizon)) return horizon;
            Optional<Instant> due = cron.get().dueTick(since, now);
            if (due.isPresent()) {
                fire(s, due.get());
                since = due.get();
            }
            return cron.get().nextAfter(since.isAfter(now) ? since : now).filter(n -> n.isBefore(horizon)).orElse(horizon);
        } catch (RuntimeException e) {
            // one schedule's failure (cron-utils throwing on a date it cannot place) must not stop the others
            errors.maintenanceError("schedule " + s.name(), e);
            return horizon;
        }
    }

    private void fire(ScheduleTiming s, Instant tick) {
        try {
            Optional<JobId> job = store.fireSchedule(s.name(), s.revision(), tick);
            if (job.isPresent()) {
                claimSignal.signal(); // our own claim loop may take it without waiting for a wake-up
                log.atDebug().addKeyValue("worker", worker).addKeyValue("schedule", s.name()).addKeyValue("job", job.get())
                        .log("schedule {} fired its tick {} as job {}", s.name(), tick, job.get());
            }
        } catch (IllegalArgumentException e) {
            // The stored job cannot be enqueued (a row written by hand): the same answer every pass until the
            // schedule is PUT again, so said once per revision, as an unparseable cron is.
            if (refused.add(revisionKey(s))) {
                errors.maintenanceError("fire schedule " + s.name() + " (revision " + s.revision() + "), whose job cannot be"
                        + " enqueued (said once; PUT it again to fix it)", e);
            }
        } catch (Throwable e) {
            errors.maintenanceError("fire schedule " + s.name() + " at " + tick, e);
        }
    }

    private static String revisionKey(ScheduleTiming s) {
        return s.name() + "@" + s.revision();
    }

    private static String key(ScheduleTiming s) {
        return s.timezone() + "\n" + s.cron();
    }

    private Optional<CronSchedule> parse(ScheduleTiming s) {
        Optional<CronSchedule> known = parsed.get(key(s));
        if (known != null) return known;
        Optional<CronSchedule> cron;
        try {
            cron = Optional.of(CronSchedule.read(s.cron(), CronSchedule.zone(s.timezone())));
        } catch (IllegalArgumentException e) {
            log.atWarn().addKeyValue("worker", worker).addKeyValue("schedule", s.name())
                    .log("schedule {} (revision {}) is not fired: {}; PUT it again to fix it", s.name(), s.revision(),
                            e.getMessage());
            cron = Optional.empty();
        }
        parsed.put(key(s), cron);
        return cron;
    }
}
