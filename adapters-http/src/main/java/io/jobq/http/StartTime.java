package io.jobq.http;

import io.jobq.domain.job.JobLimits;
import io.jobq.domain.job.StoredText;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.Optional;

/**
 * When an enqueued job may first run, from the request's {@code delay_seconds} (a number of seconds) or
 * {@code run_at} (an ISO-8601 instant with its offset, such as {@code 2026-12-01T15:00:00Z} or
 * {@code 2026-12-01T16:00:00+01:00}), at most one of them. {@code run_at} becomes a delay by this
 * server's clock, to the millisecond: an instant already past runs at once, one more than 365 days ahead
 * is refused ({@link JobLimits#delayUntil}).
 */
final class StartTime {
    private StartTime() {}

    /** @throws ApiException 400 naming {@code delay_seconds} or {@code run_at} */
    static Duration delay(Fields f, Instant now) {
        Optional<Duration> delay = Optional.ofNullable(f.numberOr("delay_seconds", JobLimits::delayOfSeconds, null));
        Optional<Instant> runAt = f.string("run_at", StartTime::instant);
        if (delay.isPresent() && runAt.isPresent()) {
            throw ApiException.invalid("run_at", "give delay_seconds or run_at, not both");
        }
        if (runAt.isPresent()) return Fields.checked("run_at", () -> JobLimits.delayUntil(runAt.get(), now));
        return delay.orElse(Duration.ZERO);
    }

    private static Instant instant(String text) {
        try {
            return OffsetDateTime.parse(text).toInstant();
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException("run_at must be an ISO-8601 instant with an offset, such as"
                    + " 2026-12-01T15:00:00Z, was '" + StoredText.excerpt(text) + "'");
        }
    }
}
