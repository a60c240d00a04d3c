package io.jobq.http;

import io.jobq.application.port.JobQuery;
import io.jobq.application.port.JobStore;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobId;
import java.util.List;
import java.util.Optional;

/**
 * One page of a job listing as a principal may see it: the one home of tenant scoping and of the next-page
 * cursor, for {@code GET /jobs} and the dashboard alike.
 *
 * @param jobs newest first, at most the query's limit
 * @param next the cursor ({@code after}) of the next page; empty exactly on the last page
 */
record JobPage(List<Job> jobs, Optional<JobId> next) {

    /**
     * Reads a page. A tenant key's query is narrowed to its tenant.
     *
     * @throws ApiException 403 naming {@code tenant} when a tenant key asks for another tenant's jobs
     */
    static JobPage read(JobStore store, JobQuery asked, Principal who) {
        asked.tenant().ifPresent(t -> who.requireTenant(t, "tenant"));
        JobQuery query = who.tenant().map(asked::forTenant).orElse(asked);
        List<Job> jobs = store.list(query);
        Optional<JobId> next = Optional.empty();
        if (jobs.size() == query.limit()) {
            // A full page may be the last one: probe for one more row so `next` is empty exactly on the last page.
            JobId last = jobs.getLast().id();
            if (!store.list(query.after(last, 1)).isEmpty()) next = Optional.of(last);
        }
        return new JobPage(jobs, next);
    }
}
