package io.jobq.http;

import io.jobq.application.port.JobQuery;
import io.jobq.application.port.JobStore;
import io.jobq.application.port.JobSummary;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobId;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * One page of a job listing as a principal may see it: the one home of tenant scoping and of the next-page
 * cursor, for {@code GET /jobs} (whole jobs) and the dashboard (summaries) alike.
 *
 * @param jobs newest first, at most the query's limit; fewer when their payloads and results pass
 *     {@link JobStore#LIST_PAGE_CHARS}
 * @param next the cursor ({@code after}) of the next page; empty exactly on the last page
 */
record JobPage<T>(List<T> jobs, Optional<JobId> next) {

    /**
     * Reads a page of whole jobs. A tenant key's query is narrowed to its tenant.
     *
     * @throws ApiException 403 naming {@code tenant} when a tenant key asks for another tenant's jobs
     */
    static JobPage<Job> read(JobStore store, JobQuery asked, Principal who) {
        return read(store::list, Job::id, true, store, asked, who);
    }

    /** As {@link #read}, of summaries: what a list shows, without payloads and results. */
    static JobPage<JobSummary> summaries(JobStore store, JobQuery asked, Principal who) {
        return read(store::summaries, JobSummary::id, false, store, asked, who);
    }

    /** @param endsEarly whether {@code list} may end a page before the limit with more to follow (whole jobs do) */
    private static <T> JobPage<T> read(Function<JobQuery, List<T>> list, Function<T, JobId> id, boolean endsEarly,
            JobStore store, JobQuery asked, Principal who) {
        asked.tenant().ifPresent(t -> who.requireTenant(t, "tenant"));
        JobQuery query = who.tenant().map(asked::forTenant).orElse(asked);
        List<T> jobs = list.apply(query);
        Optional<JobId> next = Optional.empty();
        if (!jobs.isEmpty() && (jobs.size() == query.limit() || endsEarly)) {
            // A full page may be the last one, and a page of whole jobs may end early at the store's character
            // budget (JobStore.LIST_PAGE_CHARS) with more to follow. Probe for one more row, as a summary (no payload
            // to read), so that `next` is empty exactly on the last page.
            JobId last = id.apply(jobs.getLast());
            if (!store.summaries(query.after(last, 1)).isEmpty()) next = Optional.of(last);
        }
        return new JobPage<>(jobs, next);
    }
}
