package io.jobq.http;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.jobq.application.port.EnqueueResult;
import io.jobq.application.port.JobQuery;
import io.jobq.application.port.JobStore;
import io.jobq.application.port.NewJob;
import io.jobq.application.port.NewJobBatch;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.JobState;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.StoredText;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.tenant.TenantId;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * {@code /jobs}: enqueue one or a batch, read one, list, retry a dead one, cancel one.
 *
 * <ul>
 *   <li>{@code POST /jobs} {@link EnqueueJobRequest} → 201 {@link JobView}; 200 with the original job when
 *       the tenant already used the idempotency key (nothing written).
 *   <li>{@code POST /jobs/batch} {@link EnqueueBatchRequest} → 201 {@code {"ids": [...]}}, one INSERT, all or nothing.
 *   <li>{@code GET /jobs/{id}} → 200 job; 400 if id is not a positive integer; 404 unknown.
 *   <li>{@code GET /jobs?tenant=&queue=&status=&task=&limit=&after=} → 200 {@code {"jobs": [...], "next": id|null}},
 *       newest first, keyset pagination by id; limit 1-500, default 50, a page shorter when its payloads and
 *       results pass {@link io.jobq.application.port.JobStore#LIST_PAGE_CHARS}; unknown parameters → 400.
 *   <li>{@code POST /jobs/{id}/retry} → 200 the requeued job; 409 {@code job_not_dead} naming its status; 404.
 * </ul>
 */
final class JobRoutes {
    private static final Set<String> LIST_PARAMS = Set.of("tenant", "queue", "status", "task", "limit", "after");

    private final JobStore store;
    private final JobActions actions;
    private final LiveHandlers liveHandlers;
    private final JobMetrics metrics;
    private final HttpSettings settings;

    JobRoutes(JobStore store, JobMetrics metrics, HttpSettings settings) {
        this.liveHandlers = new LiveHandlers(store);
        this.store = store;
        this.actions = new JobActions(store);
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
        Responses.json(ctx, 200, JobView.of(actions.get(Principal.of(ctx), id)));
    }

    private void retry(Context ctx) {
        Inputs.requireNoQuery(ctx);
        JobId id = Inputs.read(() -> pathId(ctx));
        Responses.json(ctx, 200, JobView.of(actions.retry(Principal.of(ctx), id)));
    }

    /**
     * 200 + the job: cancelled (it was not running, or was cancelled already), or still running with
     * {@code cancel_requested} true; 409 {@code job_finished} for a done or dead job; 404.
     */
    private void cancel(Context ctx) {
        Inputs.requireNoQuery(ctx);
        JobId id = Inputs.read(() -> pathId(ctx));
        Responses.json(ctx, 200, JobView.of(actions.cancel(Principal.of(ctx), id)));
    }

    private void list(Context ctx) {
        JobQuery asked = Inputs.read(() -> listQuery(ctx));
        JobPage<io.jobq.domain.job.Job> page = JobPage.read(store, asked, Principal.of(ctx));
        Responses.json(ctx, 200, new Views.JobPage(page.jobs().stream().map(JobView::of).toList(),
                page.next().map(JobId::value).orElse(null)));
    }

    /** The query of {@code GET /jobs}; each parameter at most once, none unknown. */
    private static JobQuery listQuery(Context ctx) {
        ListParams.requireOnly(ctx, LIST_PARAMS);
        Optional<TenantId> tenant = ListParams.param(ctx, "tenant").map(v -> Fields.checked("tenant", () -> TenantId.of(v)));
        Optional<QueueName> queue = ListParams.param(ctx, "queue").map(v -> Fields.checked("queue", () -> QueueName.of(v)));
        Optional<JobState> state = ListParams.param(ctx, "status").map(v -> {
            try {
                return JobState.fromDbName(v);
            } catch (IllegalArgumentException e) {
                throw ApiException.invalid("status", "status must be one of scheduled, queued, held, running, done, dead, cancelled, was \""
                        + StoredText.excerpt(v) + "\"");
            }
        });
        Optional<TaskName> task = ListParams.param(ctx, "task").map(v -> Fields.checked("task", () -> TaskName.of(v)));
        int limit = ListParams.limit(ctx);
        Optional<JobId> after = ListParams.param(ctx, "after").map(v -> Fields.checked("after", () -> JobId.parse("after", v)));
        return new JobQuery(tenant, queue, state, task, limit, after);
    }

    static JobId pathId(Context ctx) {
        return Fields.checked("id", () -> JobId.parse("id", ctx.pathParam("id")));
    }
}
