package io.jobq.bench;

/**
 * One timed drain of queued no-op jobs: from the workers' start to the last outcome committed.
 *
 * @param jobsPerSecond jobs ÷ that span
 * @param jobsPerClaim jobs an average claim returned, or NaN where the system does not say (the peers)
 */
record Drain(double jobsPerSecond, double jobsPerClaim) {}
