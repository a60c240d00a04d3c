package io.jobq.bench;

/**
 * One timed drain of queued no-op jobs: from the first job picked up to the last outcome committed.
 * The worker's own start-up before its first job (connecting, registering, a first poll) is not in
 * the rate, and is kept apart.
 *
 * @param jobsPerSecond jobs ÷ that span (in a time-boxed drain, the jobs completed within the box ÷ the box)
 * @param jobsPerClaim jobs an average claim returned, or NaN where the system does not say (the peers)
 * @param startupSeconds from the worker's start call to its first job picked up
 */
record Drain(double jobsPerSecond, double jobsPerClaim, double startupSeconds) {

    /**
     * @param startCall {@link System#nanoTime()} just before the worker's start call
     * @param firstJob when the first job was picked up (0: never, which {@link Waits#drained} rules out)
     * @param end when the last outcome was seen committed
     */
    static Drain timed(long jobs, long startCall, long firstJob, long end, double jobsPerClaim) {
        long first = firstJob == 0 ? startCall : firstJob;
        return new Drain(jobs / ((end - first) / 1e9), jobsPerClaim, (first - startCall) / 1e9);
    }
}
