package io.jobq.http;

import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.jobq.application.port.JobStore;
import io.jobq.domain.job.JobState;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * Operations endpoints.
 * <ul>
 *   <li>{@code GET /health} → 200 {@code {"status":"ok"}} after one database round trip; 503
 *       {@code store_unavailable} with Retry-After when the database cannot be reached.
 *   <li>{@code GET /stats} → 200 {@code {"queues": {"default": {"scheduled": 0, "queued": 3, "running": 1,
 *       "done": 10, "dead": 0}}}}.
 *   <li>{@code GET /metrics} → Prometheus text format 0.0.4 of the whole registry.
 *   <li>{@code GET /openapi.json} → the API in OpenAPI 3.1 ({@link OpenApiDocument}).
 * </ul>
 */
final class OpsRoutes {
    private final JobStore store;
    private final PrometheusMeterRegistry registry;
    private final JobMetrics metrics;
    private final OpenApiDocument openApi = new OpenApiDocument();

    OpsRoutes(JobStore store, PrometheusMeterRegistry registry, JobMetrics metrics) {
        this.store = store;
        this.registry = registry;
        this.metrics = metrics;
    }

    void register(RoutesConfig routes) {
        routes.get("/health", this::health);
        routes.get("/stats", this::stats);
        routes.get("/metrics", this::metrics);
        routes.get("/openapi.json", openApi::serve);
    }

    private void health(Context ctx) {
        store.ping();
        Responses.json(ctx, 200, new Views.Health("ok"));
    }

    private void stats(Context ctx) {
        Inputs.requireNoQuery(ctx);
        Map<String, Map<String, Long>> queues = new TreeMap<>();
        store.countsByQueueAndState().forEach((queue, byState) -> {
            Map<String, Long> row = new LinkedHashMap<>();
            for (JobState s : JobState.values()) row.put(s.dbName(), byState.getOrDefault(s, 0L));
            queues.put(queue.value(), row);
        });
        Responses.json(ctx, 200, new Views.Stats(queues));
    }

    private void metrics(Context ctx) {
        metrics.refreshIfStale();
        ctx.status(200).contentType("text/plain; version=0.0.4; charset=utf-8").result(registry.scrape());
    }
}
