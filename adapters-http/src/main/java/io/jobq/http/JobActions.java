package io.jobq.http;

import io.jobq.application.port.CancelResult;
import io.jobq.application.port.JobStore;
import io.jobq.application.port.RetryResult;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobId;

/**
 * Reading, retrying and cancelling one job on behalf of a principal: the one home of "another tenant's job
 * is absent" and of the errors these answer, for the JSON routes and the dashboard alike.
 */
final class JobActions {
    private final JobStore store;

    JobActions(JobStore store) {
        this.store = store;
    }

    /** @throws ApiException 404 {@code job_not_found} when there is no such job, or it is another tenant's */
    Job get(Principal who, JobId id) {
        return store.get(id).filter(j -> who.sees(j.tenant())).orElseThrow(() -> notFound(id));
    }

    /**
     * Moves a dead job back to queued.
     *
     * @return the job as requeued
     * @throws ApiException 404 as {@link #get}; 409 {@code job_not_dead} when it is not dead
     */
    Job retry(Principal who, JobId id) {
        requireVisible(who, id);
        return switch (store.retryDead(id)) {
            case RetryResult.Requeued r -> r.job();
            case RetryResult.NotDead n -> throw new ApiException(409, "job_not_dead",
                    "job " + id + " is " + n.job().state().dbName() + "; only dead jobs can be retried", null);
            case RetryResult.NotFound nf -> throw notFound(id);
        };
    }

    /**
     * Cancels a job: at once unless it runs, else by asking its worker.
     *
     * @return the job, cancelled or still running with {@code cancel_requested}
     * @throws ApiException 404 as {@link #get}; 409 {@code job_finished} for a done, dead or cancelled job
     */
    Job cancel(Principal who, JobId id) {
        requireVisible(who, id);
        return switch (store.cancel(id)) {
            case CancelResult.Cancelled c -> c.job();
            case CancelResult.Requested r -> r.job();
            case CancelResult.Finished f -> throw new ApiException(409, "job_finished",
                    "job " + id + " is " + f.job().state().dbName() + "; only a job not yet finished can be cancelled", null);
            case CancelResult.NotFound nf -> throw notFound(id);
        };
    }

    /** For a tenant key, another tenant's job (or none) is 404, before anything is done to it. */
    private void requireVisible(Principal who, JobId id) {
        if (who.tenant().isPresent()) get(who, id);
    }

    private static ApiException notFound(JobId id) {
        return new ApiException(404, "job_not_found", "no job has id " + id, "id");
    }
}
