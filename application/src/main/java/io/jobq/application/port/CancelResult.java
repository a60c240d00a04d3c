package io.jobq.application.port;

import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobId;

/** What {@link JobStore#cancel} did. Cancelling is idempotent: asking again answers the same. */
public sealed interface CancelResult {
    /** The job is cancelled: it was scheduled, queued or held (now cancelled), or cancelled already. */
    record Cancelled(Job job) implements CancelResult {}

    /**
     * The job is running: cancelling is requested ({@link Job#cancelRequested()}). Its worker tells the
     * handler at its next heartbeat; when the run ends other than in success it becomes cancelled.
     */
    record Requested(Job job) implements CancelResult {}

    /** The job is done or dead: nothing changed (HTTP 409, naming its state). */
    record Finished(Job job) implements CancelResult {}

    /** No job has this id (HTTP 404). */
    record NotFound(JobId id) implements CancelResult {}
}
