package io.jobq.http;

import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.jobq.application.port.JobStore;
import io.jobq.application.port.TenantSettings;
import io.jobq.domain.tenant.TenantId;

/**
 * {@code PUT /tenants/{tenant}} {@link TenantRequest} → 200 {@code {"tenant", "queue", "weight", "max_running"}}
 * ({@code max_running} null when the tenant has no cap).
 *
 * <p>The weight applies to start tags handed out afterwards: jobs that become runnable later (new
 * enqueues, promotions of scheduled jobs, retries). Jobs already queued keep their place. A cap takes
 * effect at once: see {@link JobStore#configureTenant}.
 */
final class TenantRoutes {
    private final JobStore store;
    private final HttpSettings settings;

    TenantRoutes(JobStore store, HttpSettings settings) {
        this.store = store;
        this.settings = settings;
    }

    void register(RoutesConfig routes) {
        routes.put("/tenants/{tenant}", this::configure);
    }

    private void configure(Context ctx) {
        Inputs.requireNoQuery(ctx);
        TenantId tenant = Inputs.read(() -> Fields.checked("tenant", () -> TenantId.of(ctx.pathParam("tenant"))));
        TenantRequest req = Inputs.read(() -> TenantRequest.from(JsonBodies.readObject(ctx, settings.maxBodyBytes())));
        TenantSettings set = store.configureTenant(req.toUpdate(tenant));
        Responses.json(ctx, 200, new Views.TenantView(set.tenant().value(), set.queue().value(), set.weight().value(),
                set.maxRunning().map(m -> m.value()).orElse(null)));
    }
}
