package io.jobq.bench;

import java.time.Duration;

/**
 * The sizes of one chaos soak ({@link SoakExperiment}).
 *
 * @param jobs accepted through the API while the faults run
 * @param workers worker processes ({@code --concurrency} {@link #CONCURRENCY} each)
 * @param faults how long faults are injected; the enqueue spreads its jobs over the first {@link #ENQUEUE_SHARE} of it
 * @param drainLimit how long the jobs may take to finish after the last fault before the run fails
 * @param clients concurrent HTTP clients enqueueing
 */
record SoakPlan(String mode, int jobs, int workers, Duration faults, Duration drainLimit, int clients) {
    static final SoakPlan FULL = new SoakPlan("full", 10_000, 6, Duration.ofSeconds(150), Duration.ofMinutes(5), 4);
    static final SoakPlan QUICK = new SoakPlan("quick", 2_000, 4, Duration.ofSeconds(40), Duration.ofSeconds(60), 3);

    static final int CONCURRENCY = 4;
    /** Every second worker started claims this many jobs ahead ({@code --prefetch}), so kills, the stall and the restarts also hit jobs waiting for a slot. */
    static final int PREFETCH = 8;
    static final Duration LEASE = Duration.ofSeconds(2);
    /** Slow jobs run past the lease: they finish only if their heartbeats keep it. */
    static final Duration SLOW = LEASE.plusSeconds(1);
    static final long FAST_MS = 20;
    /** Enough attempts that a job in hand at several kills, restarts and a stall still ends done. */
    static final int MAX_ATTEMPTS = 25;
    static final double ENQUEUE_SHARE = 0.8;
    /** max_connections of the throwaway cluster: room for every process's pool, which the hog then fills. */
    static final int MAX_CONNECTIONS = 120;
    /** How long a stopped worker stays stopped: past its lease, so its jobs are reaped and re-run meanwhile. */
    static final Duration STALL = LEASE.plusSeconds(3);
    /** How long the hog holds every free connection. */
    static final Duration HOG = Duration.ofSeconds(5);

    /** Which kind job {@code i} is: 4 % slow, 8 % flaky (fails twice), 3 % doomed (fails permanently), the rest fast. */
    static String task(int i) {
        int r = Math.floorMod(i * 7919, 100);
        if (r < 4) return ChaosHandlers.SLOW;
        if (r < 12) return ChaosHandlers.FLAKY;
        if (r < 15) return ChaosHandlers.DOOMED;
        return ChaosHandlers.FAST;
    }

    /** Job {@code i}'s payload, by its kind. */
    static String payload(int i) {
        return switch (task(i)) {
            case ChaosHandlers.SLOW -> "{\"ms\": " + SLOW.toMillis() + "}";
            case ChaosHandlers.FLAKY -> "{\"ms\": " + FAST_MS + ", \"fail_until\": 2}";
            case ChaosHandlers.DOOMED -> "{\"permanent\": \"doomed job " + i + "\"}";
            default -> "{\"ms\": " + FAST_MS + "}";
        };
    }
}
