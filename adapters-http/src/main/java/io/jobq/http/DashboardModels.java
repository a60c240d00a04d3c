package io.jobq.http;

import io.jobq.application.port.JobSummary;
import io.jobq.domain.job.JobState;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;

/**
 * What the dashboard's templates are given: one record per page, named as the templates name them. Text is
 * passed as it is (the templates escape it); links are built here, with every value URL-encoded.
 */
final class DashboardModels {
    private DashboardModels() {}

    /** The header of every page. */
    record Nav(String who, boolean canLogout) {
        static Nav of(Principal p, boolean keysOn) {
            String who = p.tenant().map(t -> "tenant " + t.value()).orElse(keysOn ? "admin" : "open access (no admin key set)");
            return new Nav(who, keysOn);
        }
    }

    record Overview(String title, Refresh refresh, Nav nav, String chart, boolean backlogSampled, boolean admin,
                    List<QueueRow> queues, List<TenantRow> tenants, boolean tenantsCut, int tenantsShown) {}

    record QueueRow(String queue, String jobsLink, String deadLink, long scheduled, long queued, long held, long running,
                    long done, long dead, long cancelled, long finishedLast5Minutes) {}

    record TenantRow(String queue, String tenant, String jobsLink, String weight, String cap, long backlog, long running) {}

    /** @param newestLink the first page, on a later one (null on the first) */
    record JobList(String title, Refresh refresh, Nav nav, Filter filter, List<StatusOption> statuses, List<JobRow> jobs,
                   String newestLink, String nextLink, String error, boolean noJobs) {}

    /** The list's filters as typed (shown back in the form). */
    record Filter(String tenant, String queue, String task, String status, boolean refresh) {
        /** The query string of these filters, without {@code after}; empty values are left out. */
        String query() {
            StringBuilder q = new StringBuilder();
            param(q, "tenant", tenant);
            param(q, "queue", queue);
            param(q, "task", task);
            param(q, "status", status);
            if (refresh) param(q, "refresh", "on");
            return q.toString();
        }
    }

    record StatusOption(String value, boolean selected) {}

    record JobRow(long id, String link, String tenant, String queue, String task, String status, String attempts,
                  Instant created, Instant finished, String lastError, boolean retryable, boolean cancellable) {
        static JobRow of(JobSummary j) {
            return new JobRow(j.id().value(), "/ui/jobs/" + j.id().value(), j.tenant().value(), j.queue().value(), j.task().value(),
                    j.state().dbName(), j.attempts() + " / " + j.maxAttempts(), j.createdAt(), j.finishedAt().orElse(null),
                    j.lastErrorStart().map(e -> excerpt(e, 120)).orElse(null), DashboardModels.retryable(j.state()), DashboardModels.cancellable(j.state()));
        }
    }

    /** @param refresh a live job's page reloads itself, at its own address (never an action's, nor a message's) */
    record JobDetail(String title, Refresh refresh, Nav nav, JobView job, String payload, String result, String lastError,
                     String lease, boolean retryable, boolean cancellable, String message, String error) {}

    /** A page's {@code <meta http-equiv="refresh">}: every {@code seconds}, to {@code url}. */
    record Refresh(int seconds, String url) {}

    /** @param next the dashboard page to open after logging in, or null for the overview */
    record Login(String title, Refresh refresh, Nav nav, String error, String next) {}

    record Failure(String title, Refresh refresh, Nav nav, int status, String message) {}

    /** Whether a page offers Retry: only a dead job can be retried. */
    static boolean retryable(JobState state) {
        return state == JobState.DEAD;
    }

    /** Whether a page offers Cancel: a job not yet finished. */
    static boolean cancellable(JobState state) {
        return !state.isFinal();
    }

    static String link(String path, String query) {
        return query.isEmpty() ? path : path + "?" + query;
    }

    static void param(StringBuilder q, String name, String value) {
        if (value == null || value.isEmpty()) return;
        if (!q.isEmpty()) q.append('&');
        q.append(name).append('=').append(URLEncoder.encode(value, StandardCharsets.UTF_8));
    }

    /** At most {@code max} characters of {@code text}, never cutting a character in two (a surrogate pair). */
    static String excerpt(String text, int max) {
        if (text.length() <= max) return text;
        int end = Character.isHighSurrogate(text.charAt(max - 1)) ? max - 1 : max;
        return text.substring(0, end) + "…";
    }
}
