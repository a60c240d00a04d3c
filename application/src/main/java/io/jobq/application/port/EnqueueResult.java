package io.jobq.application.port;

import io.jobq.domain.job.Job;

/** What an enqueue did: created a job, or found the one an earlier request made with the same key. */
public sealed interface EnqueueResult {
    /** The job as stored. */
    Job job();

    /** A new job was inserted (HTTP 201). */
    record Created(Job job) implements EnqueueResult {}

    /** The tenant already had a job with this idempotency key; nothing was written (HTTP 200). */
    record Existing(Job job) implements EnqueueResult {}
}
