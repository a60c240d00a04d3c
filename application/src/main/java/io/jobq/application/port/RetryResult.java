package io.jobq.application.port;

import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobId;

/** What a manual retry of a dead job did. */
public sealed interface RetryResult {
    /** The dead job is queued again with a fresh fair vtime and a fresh budget of attempts. */
    record Requeued(Job job) implements RetryResult {}

    /** The job is not dead; nothing changed (HTTP 409, naming its state). */
    record NotDead(Job job) implements RetryResult {}

    /** No job has this id (HTTP 404). */
    record NotFound(JobId id) implements RetryResult {}
}
