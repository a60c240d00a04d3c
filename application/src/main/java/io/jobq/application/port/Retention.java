package io.jobq.application.port;

import java.time.Duration;
import java.util.Objects;

/**
 * How long a queue keeps its finished jobs before maintenance deletes them ({@link JobStore#deleteFinished}),
 * per final state; {@link Duration#ZERO} keeps them for ever. Whole seconds, 0 to {@link #MAX} (100 years).
 *
 * @param done default 7 days
 * @param dead default 30 days: dead letters are what an operator looks at, so they stay longer
 * @param cancelled default 7 days
 */
public record Retention(Duration done, Duration dead, Duration cancelled) {
    /** The longest retention other than for ever: 100 years of 365 days. */
    public static final Duration MAX = Duration.ofDays(36_500);
    /** What a queue nobody configured keeps. */
    public static final Retention DEFAULT = new Retention(Duration.ofDays(7), Duration.ofDays(30), Duration.ofDays(7));

    /** @throws IllegalArgumentException naming the field (retention.done, …) that is negative, fractional or over 100 years */
    public Retention {
        check("retention.done", done);
        check("retention.dead", dead);
        check("retention.cancelled", cancelled);
    }

    private static void check(String name, Duration d) {
        Objects.requireNonNull(d, name);
        if (d.isNegative() || d.compareTo(MAX) > 0 || d.getNano() != 0) {
            throw new IllegalArgumentException(name + " must be whole seconds from 0 (keep for ever) to " + MAX.toSeconds() + ", was " + d);
        }
    }
}
