package io.jobq.http;

import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.jobq.application.port.JobStore;
import io.jobq.application.port.TenantSettings;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.tenant.TenantId;

/**
 * {@code PUT /tenants/{tenant}} {@link SetWeightRequest} → 200 {@code {"tenant", "queue", "weight"}}.
 *
 * <p>The weight applies to start tags handed out afterwards: jobs that become runnable later (new
 * enqueues, promotions of scheduled jobs, retries). Jobs already queued keep their place.
 */
final class TenantRoutes {
    private final JobStore store;
    private final HttpSettings settings;

    TenantRoutes(JobStore store, HttpSettings settings) {
        this.store = store;
        this.settings = settings;
    }

    void register(RoutesConfig routes) {
        routes.put("/tenants/{tenant}", this::setWeight);
    }

    private void setWeight(Context ctx) {
        TenantId tenant = Inputs.read(() -> Fields.checked("tenant", () -> TenantId.of(ctx.pathParam("tenant"))));
        SetWeightRequest req = Inputs.read(() -> SetWeightRequest.from(JsonBodies.readObject(ctx, settings.maxBodyBytes())));
        TenantSettings set = store.setWeight(tenant, QueueName.of(req.queue()), req.weight());
        Responses.json(ctx, 200, new Views.TenantView(set.tenant().value(), set.queue().value(), set.weight().value()));
    }
}
