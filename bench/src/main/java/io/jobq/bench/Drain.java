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

    /**
     * After jobq's workers closed (giving back what they claimed and never started): nothing may have
     * failed, every job counted must be done (counted among {@link NoopJobs#TENANT}'s, so that growth's
     * million done filler rows cannot stand in for them), and when {@code counted} is all of them no other
     * job may be left. One check for every jobq drain, boxed or not.
     *
     * @param after what ran, for the message
     * @throws BenchException naming the counts when a check fails
     */
    static void checkDone(BenchDatabase db, long counted, boolean all, String after) {
        long failed = db.queryLong("SELECT count(*) FROM jobs WHERE state NOT IN ('done', 'queued', 'running')");
        long notDone = db.queryLong("SELECT count(*) FROM jobs WHERE state <> 'done'");
        long doneRows = db.queryLong("SELECT count(*) FROM jobs WHERE state = 'done' AND tenant = '" + NoopJobs.TENANT.value() + "'");
        if (failed != 0 || (all && notDone != 0) || doneRows < counted) {
            throw new BenchException(notDone + " jobs not done (" + failed + " failed), " + doneRows + " done of " + counted
                    + " counted, after " + after);
        }
    }
}
