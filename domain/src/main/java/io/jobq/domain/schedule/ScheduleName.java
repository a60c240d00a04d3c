package io.jobq.domain.schedule;

import io.jobq.domain.job.Identifier;

/**
 * The name of a cron schedule ({@code PUT /schedules/{name}}), unique across the whole queue: 1 to 128
 * characters of {@code [A-Za-z0-9_.:-]} ({@link Identifier}), so it is safe in a URL path segment and a log line;
 * not {@code .} or {@code ..}, which clients and proxies resolve away in a path.
 */
public record ScheduleName(String value) {
    /** @throws IllegalArgumentException if the name breaks {@link Identifier}'s rule */
    public ScheduleName {
        Identifier.check("schedule", value);
        if (value.equals(".") || value.equals("..")) {
            throw new IllegalArgumentException("schedule must not be \".\" or \"..\": a path would resolve it away");
        }
    }

    public static ScheduleName of(String value) {
        return new ScheduleName(value);
    }

    @Override
    public String toString() {
        return value;
    }
}
