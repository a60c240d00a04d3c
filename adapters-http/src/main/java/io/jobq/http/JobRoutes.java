package io.jobq.http;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.jobq.application.port.CancelResult;
import io.jobq.application.port.EnqueueResult;
import io.jobq.application.port.JobQuery;
import io.jobq.application.port.JobStore;
import io.jobq.application.port.NewJob;
import io.jobq.application.port.NewJobBatch;
import io.jobq.application.port.RetryResult;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.JobState;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.StoredText;
import io.jobq.domain.tenant.TenantId;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * {@code /jobs}: enqueue one or a batch, read one, list, retry a dead one.
 *
 * <ul>
 *   <li>{@code POST /jobs} {@link EnqueueJobRequest} → 201 {@link JobView}; 200 with the original job when
 *       the tenant already used the idempotency key (nothing written).
 *   <li>{@code POST /jobs/batch} {@link EnqueueBatchRequest} → 201 {@code {"ids": [...]}}, one INSERT, all or nothing.
 *   <li>{@code GET /jobs/{id}} → 200 job; 400 if id is not a positive integer; 404 unknown.
 *   <li>{@code GET /jobs?tenant=&queue=&status=&limit=&after=} → 200 {@code {"jobs": [...], "next": id|null}},
 *       newest first, keyset pagination by id; limit 1-500, default 50; unknown parameters → 400.
 *   <li>{@code POST /jobs/{id}/retry} → 200 the requeued job; 409 {@code job_not_dead} naming its status; 404.
 * </ul>
 */
final class JobRoutes {
    private static final Set<String> LIST_PARAMS = Set.of("tenant", "queue", "status", "limit", "after");

    private final JobStore store;
    private final LiveHandlers liveHandlers;
    private final JobMetrics metrics;
    private final HttpSettings settings;

    JobRoutes(JobStore store, JobMetrics metrics, HttpSettings settings) {
        this.liveHandlers = new LiveHandlers(store);
        this.store = store;
        this.metrics = metrics;
        this.settings = settings;
    }

    void register(RoutesConfig routes) {
        routes.post("/jobs", this::enqueue);
        routes.post("/jobs/batch", this::enqueueBatch);
        routes.get("/jobs", this::list);
        routes.get("/jobs/{id}", this::get);
        routes.post("/jobs/{id}/retry", this::retry);
        routes.post("/jobs/{id}/cancel", this::cancel);
    }

    private void enqueue(Context ctx) {
        Inputs.requireNoQuery(ctx);
        Principal who = Principal.of(ctx);
        NewJob job = Inputs.read(() -> EnqueueJobRequest.from(JsonBodies.readObject(ctx, settings.maxBodyBytes()),
                who.tenant().orElse(TenantId.DEFAULT)).toNewJob());
        who.requireTenant(job.tenant(), "tenant");
        EnqueueResult result = store.enqueue(job);
        if (result instanceof EnqueueResult.Created) metrics.enqueued(result.job().queue(), 1);
        ObjectNode body = Responses.OUT.valueToTree(JobView.of(result.job()));
        liveHandlers.warning(job.queue(), job.task()).ifPresent(w -> {
            body.put("warning", w);
            if (result instanceof EnqueueResult.Created) metrics.enqueuedUnhandled(job.queue(), job.task(), 1);
        });
        Responses.json(ctx, result instanceof EnqueueResult.Created ? 201 : 200, body);
    }

    private void enqueueBatch(Context ctx) {
        Inputs.requireNoQuery(ctx);
        Principal who = Principal.of(ctx);
        NewJobBatch batch = Inputs.read(() -> EnqueueBatchRequest.from(JsonBodies.readObject(ctx, settings.maxBodyBytes()),
                who.tenant().orElse(TenantId.DEFAULT)).toNewJobBatch());
        who.requireTenant(batch.tenant(), "tenant");
        List<JobId> ids = store.enqueueBatch(batch);
        metrics.enqueued(batch.queue(), ids.size());
        Optional<String> warning = liveHandlers.warning(batch.queue(), batch.task());
        warning.ifPresent(w -> metrics.enqueuedUnhandled(batch.queue(), batch.task(), ids.size()));
        Responses.json(ctx, 201, new Views.BatchCreated(ids.stream().map(JobId::value).toList(), warning.orElse(null)));
    }

    private void get(Context ctx) {
        Inputs.requireNoQuery(ctx);
        JobId id = Inputs.read(() -> pathId(ctx));
        Job job = store.get(id).filter(j -> Principal.of(ctx).sees(j.tenant())).orElseThrow(() -> notFound(id));
        Responses.json(ctx, 200, JobView.of(job));
    }

    private void retry(Context ctx) {
        Inputs.requireNoQuery(ctx);
        JobId id = Inputs.read(() -> pathId(ctx));
        requireVisible(ctx, id);
        switch (store.retryDead(id)) {
            case RetryResult.Requeued r -> Responses.json(ctx, 200, JobView.of(r.job()));
            case RetryResult.NotDead n -> throw new ApiException(409, "job_not_dead",
                    "job " + id + " is " + n.job().state().dbName() + "; only dead jobs can be retried", null);
            case RetryResult.NotFound nf -> throw notFound(id);
        }
    }

    /**
     * 200 + the job: cancelled (it was not running, or was cancelled already), or still running with
     * {@code cancel_requested} true; 409 {@code job_finished} for a done or dead job; 404.
     */
    private void cancel(Context ctx) {
        Inputs.requireNoQuery(ctx);
        JobId id = Inputs.read(() -> pathId(ctx));
        requireVisible(ctx, id);
        switch (store.cancel(id)) {
            case CancelResult.Cancelled c -> Responses.json(ctx, 200, JobView.of(c.job()));
            case CancelResult.Requested r -> Responses.json(ctx, 200, JobView.of(r.job()));
            case CancelResult.Finished f -> throw new ApiException(409, "job_finished",
                    "job " + id + " is " + f.job().state().dbName() + "; only a job not yet finished can be cancelled", null);
            case CancelResult.NotFound nf -> throw notFound(id);
        }
    }

    /** For a tenant key, another tenant's job (or none) is 404, before anything is done to it. */
    private void requireVisible(Context ctx, JobId id) {
        Principal who = Principal.of(ctx);
        if (who.tenant().isPresent() && store.get(id).filter(j -> who.sees(j.tenant())).isEmpty()) throw notFound(id);
    }

    private void list(Context ctx) {
        JobQuery asked = Inputs.read(() -> listQuery(ctx));
        Principal who = Principal.of(ctx);
        asked.tenant().ifPresent(t -> who.requireTenant(t, "tenant"));
        JobQuery query = who.tenant().isEmpty() ? asked
                : new JobQuery(who.tenant(), asked.queue(), asked.state(), asked.limit(), asked.after());
        List<Job> page = store.list(query);
        Long next = null;
        if (page.size() == query.limit()) {
            // A full page may be the last one: probe for one more row so `next` is null exactly on the last page.
            JobId last = page.getLast().id();
            JobQuery probe = new JobQuery(query.tenant(), query.queue(), query.state(), 1, Optional.of(last));
            if (!store.list(probe).isEmpty()) next = last.value();
        }
        Responses.json(ctx, 200, new Views.JobPage(page.stream().map(JobView::of).toList(), next));
    }

    /** The query of {@code GET /jobs}; each parameter at most once, none unknown. */
    private static JobQuery listQuery(Context ctx) {
        requireWellFormed(ctx.queryString());
        for (var e : ctx.queryParamMap().entrySet()) {
            String shown = StoredText.excerpt(e.getKey());
            if (!LIST_PARAMS.contains(e.getKey())) {
                throw new ApiException(400, "unknown_field", "unknown query parameter \"" + shown + "\"; accepted: after, limit, queue, status, tenant", shown);
            }
            if (e.getValue().size() > 1) throw ApiException.invalid(shown, shown + " must be given at most once");
        }
        Optional<TenantId> tenant = param(ctx, "tenant").map(v -> Fields.checked("tenant", () -> TenantId.of(v)));
        Optional<QueueName> queue = param(ctx, "queue").map(v -> Fields.checked("queue", () -> QueueName.of(v)));
        Optional<JobState> state = param(ctx, "status").map(v -> {
            try {
                return JobState.fromDbName(v);
            } catch (IllegalArgumentException e) {
                throw ApiException.invalid("status", "status must be one of scheduled, queued, held, running, done, dead, cancelled, was \""
                        + StoredText.excerpt(v) + "\"");
            }
        });
        int limit = param(ctx, "limit").map(v -> {
            // ASCII digits only: Long.parseLong would also take "+5"; 18 digits cannot overflow a long
            boolean digits = !v.isEmpty() && v.length() <= 18 && v.chars().allMatch(c -> c >= '0' && c <= '9');
            long n = digits ? Long.parseLong(v) : -1;
            if (n < 1 || n > JobQuery.MAX_LIMIT) {
                throw ApiException.invalid("limit", "limit must be an integer 1-" + JobQuery.MAX_LIMIT + ", was \"" + StoredText.excerpt(v) + "\"");
            }
            return (int) n;
        }).orElse(JobQuery.DEFAULT_LIMIT);
        Optional<JobId> after = param(ctx, "after").map(v -> Fields.checked("after", () -> JobId.parse("after", v)));
        return new JobQuery(tenant, queue, state, limit, after);
    }

    /**
     * Refuses a query string with a broken percent-escape ({@code limit=%zz}, {@code a=%}): the server's
     * decoder drops such a parameter silently, and a parameter must never be silently ignored.
     */
    private static void requireWellFormed(String query) {
        if (query == null) return;
        for (String pair : query.split("&")) {
            for (int i = pair.indexOf('%'); i >= 0; i = pair.indexOf('%', i + 1)) {
                if (i + 2 >= pair.length() || !HexFormat.isHexDigit(pair.charAt(i + 1)) || !HexFormat.isHexDigit(pair.charAt(i + 2))) {
                    String name = StoredText.excerpt(pair.split("=", 2)[0]);
                    throw ApiException.invalid(name, "query parameter \"" + name + "\" has a broken percent-escape (% and two hex digits)");
                }
            }
        }
    }

    private static Optional<String> param(Context ctx, String name) {
        return Optional.ofNullable(ctx.queryParam(name));
    }

    static JobId pathId(Context ctx) {
        return Fields.checked("id", () -> JobId.parse("id", ctx.pathParam("id")));
    }

    private static ApiException notFound(JobId id) {
        return new ApiException(404, "job_not_found", "no job has id " + id, "id");
    }
}
