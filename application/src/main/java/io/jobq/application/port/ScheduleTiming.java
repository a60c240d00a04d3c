package io.jobq.application.port;

import io.jobq.domain.schedule.ScheduleName;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * What the schedule firer reads of a stored schedule: when its ticks fall and which one fired last, without
 * the job it enqueues. Every worker reads every schedule about once a second; with their payloads (up to
 * {@link io.jobq.domain.job.Job#MAX_PAYLOAD_BYTES} of JSON each) a few thousand schedules would be gigabytes
 * per read, an OutOfMemoryError in every worker at once.
 *
 * @param cron the expression's text and {@code timezone} its zone id, as stored (see {@link Schedule})
 * @param revision as {@link Schedule#revision}: firing names it, so a replaced schedule fires nothing
 * @param updatedAt when it was last set, by the store's clock; no tick at or before it fires
 * @param lastTick the latest tick fired, if any
 */
public record ScheduleTiming(ScheduleName name, String cron, String timezone, long revision, Instant updatedAt,
        Optional<Instant> lastTick) {

    public ScheduleTiming {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(cron, "cron");
        Objects.requireNonNull(timezone, "timezone");
        Objects.requireNonNull(updatedAt, "updatedAt");
        Objects.requireNonNull(lastTick, "lastTick");
    }

    /** The instant after which ticks are due: the latest fired tick, or the last change if later. */
    public Instant since() {
        return lastTick.filter(t -> t.isAfter(updatedAt)).orElse(updatedAt);
    }
}
