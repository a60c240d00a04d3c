package io.jobq.postgres;

/** Which queued job a claim takes first. Production uses {@link #FAIR}; the benchmarks compare both. */
public enum ClaimOrder {
    /** Lowest start tag (vtime), then id: start-time fair queuing across tenants. Rides index {@code jobs_runnable}. */
    FAIR,
    /** Lowest id: oldest first, whoever enqueued it. Rides index {@code jobs_runnable_fifo}. */
    FIFO
}
