package io.jobq.http;

import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.jobq.application.port.EnqueueResult;
import io.jobq.application.port.JobQuery;
import io.jobq.application.port.JobStore;
import io.jobq.application.port.RetryResult;
import io.jobq.domain.job.Identifier;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.JobState;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.tenant.TenantId;
import java.util.List;
import java.util.Map;
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
    private final JobMetrics metrics;
    private final HttpSettings settings;

    JobRoutes(JobStore store, JobMetrics metrics, HttpSettings settings) {
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
    }

    private void enqueue(Context ctx) {
        EnqueueJobRequest req = EnqueueJobRequest.from(JsonBodies.readObject(ctx, settings.maxBodyBytes()));
        EnqueueResult result = store.enqueue(req.toNewJob());
        if (result instanceof EnqueueResult.Created) metrics.enqueued(result.job().queue(), 1);
        Responses.json(ctx, result instanceof EnqueueResult.Created ? 201 : 200, JobView.of(result.job()));
    }

    private void enqueueBatch(Context ctx) {
        EnqueueBatchRequest req = EnqueueBatchRequest.from(JsonBodies.readObject(ctx, settings.maxBodyBytes()));
        List<JobId> ids = store.enqueueBatch(req.toNewJobBatch());
        metrics.enqueued(QueueName.of(req.queue()), ids.size());
        Responses.json(ctx, 201, new Views.BatchCreated(ids.stream().map(JobId::value).toList()));
    }

    private void get(Context ctx) {
        JobId id = pathId(ctx);
        Job job = store.get(id).orElseThrow(() -> notFound(id));
        Responses.json(ctx, 200, JobView.of(job));
    }

    private void retry(Context ctx) {
        JobId id = pathId(ctx);
        switch (store.retryDead(id)) {
            case RetryResult.Requeued r -> Responses.json(ctx, 200, JobView.of(r.job()));
            case RetryResult.NotDead n -> throw new ApiException(409, "job_not_dead",
                    "job " + id + " is " + n.job().state().dbName() + "; only dead jobs can be retried", null);
            case RetryResult.NotFound nf -> throw notFound(id);
        }
    }

    private void list(Context ctx) {
        Map<String, List<String>> params = ctx.queryParamMap();
        for (var e : params.entrySet()) {
            String shown = JsonBodies.printable(e.getKey());
            if (!LIST_PARAMS.contains(e.getKey())) {
                throw new ApiException(400, "unknown_field", "unknown query parameter \"" + shown + "\"; accepted: after, limit, queue, status, tenant", shown);
            }
            if (e.getValue().size() > 1) throw ApiException.invalid(shown, shown + " must be given at most once");
        }
        Optional<TenantId> tenant = param(ctx, "tenant").map(v -> TenantId.of(identifier("tenant", v)));
        Optional<QueueName> queue = param(ctx, "queue").map(v -> QueueName.of(identifier("queue", v)));
        Optional<JobState> state = param(ctx, "status").map(v -> {
            try {
                return JobState.fromDbName(v);
            } catch (IllegalArgumentException e) {
                throw ApiException.invalid("status", "status must be one of scheduled, queued, running, done, dead, was \""
                        + JsonBodies.printable(v) + "\"");
            }
        });
        int limit = param(ctx, "limit").map(v -> {
            String range = "1-" + JobQuery.MAX_LIMIT;
            long n = parseLong("limit", v, "an integer " + range);
            if (n < 1 || n > JobQuery.MAX_LIMIT) throw ApiException.invalid("limit", "limit must be " + range + ", was " + n);
            return (int) n;
        }).orElse(JobQuery.DEFAULT_LIMIT);
        Optional<JobId> after = param(ctx, "after").map(v -> positiveId("after", v));
        List<Job> page = store.list(new JobQuery(tenant, queue, state, limit, after));
        Long next = null;
        if (page.size() == limit) {
            // A full page may be the last one: probe for one more row so `next` is null exactly on the last page.
            JobId last = page.getLast().id();
            if (!store.list(new JobQuery(tenant, queue, state, 1, Optional.of(last))).isEmpty()) next = last.value();
        }
        Responses.json(ctx, 200, new Views.JobPage(page.stream().map(JobView::of).toList(), next));
    }

    private static Optional<String> param(Context ctx, String name) {
        return Optional.ofNullable(ctx.queryParam(name));
    }

    private static String identifier(String name, String value) {
        if (!Identifier.isValid(value)) {
            throw ApiException.invalid(name, name + " must be 1-" + Identifier.MAX_LENGTH + " characters of [A-Za-z0-9_.:-], was \""
                    + JsonBodies.printable(value) + "\"");
        }
        return value;
    }

    static JobId pathId(Context ctx) {
        return positiveId("id", ctx.pathParam("id"));
    }

    private static JobId positiveId(String name, String value) {
        long n = parseLong(name, value, "a positive integer");
        if (n < 1) throw ApiException.invalid(name, name + " must be a positive integer, was " + n);
        return JobId.of(n);
    }

    private static long parseLong(String name, String value, String expected) {
        // digits only: Long.parseLong would also take "+5"
        if (value.isEmpty() || value.length() > 19 || !value.chars().allMatch(c -> (c >= '0' && c <= '9') || c == '-')
                || value.lastIndexOf('-') > 0) {
            throw ApiException.invalid(name, name + " must be " + expected + ", was \"" + JsonBodies.printable(value) + "\"");
        }
        try {
            return Long.parseLong(value);
        } catch (NumberFormatException e) {
            throw ApiException.invalid(name, name + " must be " + expected + ", was \"" + JsonBodies.printable(value) + "\"");
        }
    }

    private static ApiException notFound(JobId id) {
        return new ApiException(404, "job_not_found", "no job has id " + id, "id");
    }
}
