package io.jobq.application.worker;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Pauses between attempts while the store is unavailable: exponential with equal jitter, each pause
 * in {@code [d/2, d]} with {@code d} doubling from {@code first} up to {@code cap} (100 ms, 200 ms, …,
 * 5 s by default), so that many workers coming back from one outage do not retry in lockstep. Not
 * thread-safe: one per loop.
 */
final class OutageBackoff {
    private final Duration first;
    private final Duration cap;
    private Duration next;

    OutageBackoff(Duration first, Duration cap) {
        this.first = first;
        this.cap = cap;
        this.next = first;
    }

    /** The loop's default: from {@link WorkerSettings#MIN_OUTAGE_BACKOFF} up to the settings' cap. */
    static OutageBackoff of(WorkerSettings settings) {
        return new OutageBackoff(WorkerSettings.MIN_OUTAGE_BACKOFF, settings.outageBackoffCap());
    }

    Duration next() {
        Duration d = next;
        Duration doubled = next.multipliedBy(2);
        next = doubled.compareTo(cap) <= 0 ? doubled : cap;
        long half = d.toNanos() / 2;
        return Duration.ofNanos(half + ThreadLocalRandom.current().nextLong(half + 1));
    }

    void reset() {
        next = first;
    }
}
