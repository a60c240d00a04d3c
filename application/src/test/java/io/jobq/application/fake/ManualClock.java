package io.jobq.application.fake;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;

/** An {@link InstantSource} that moves only when a test says so. Thread-safe. */
public final class ManualClock implements InstantSource {
    /** Where a clock built with {@link #ManualClock()} starts: 2026-01-01T00:00:00Z. */
    public static final Instant DEFAULT_START = Instant.parse("2026-01-01T00:00:00Z");

    private final AtomicReference<Instant> now;

    public ManualClock() {
        this(DEFAULT_START);
    }

    public ManualClock(Instant start) {
        this.now = new AtomicReference<>(Objects.requireNonNull(start, "start"));
    }

    @Override
    public Instant instant() {
        return now.get();
    }

    /**
     * Moves the clock forward.
     *
     * @return the new time
     * @throws IllegalArgumentException if {@code by} is negative (time never runs backwards here)
     */
    public Instant advance(Duration by) {
        if (by.isNegative()) throw new IllegalArgumentException("cannot advance by a negative duration: " + by);
        return now.updateAndGet(t -> t.plus(by));
    }
}
