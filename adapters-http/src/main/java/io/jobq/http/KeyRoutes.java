package io.jobq.http;

import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.jobq.application.port.ApiKeyStore.ApiKey;
import io.jobq.application.port.JobStore;
import io.jobq.domain.tenant.TenantId;
import java.time.Instant;
import java.util.List;

/**
 * Tenants' API keys, for the admin ({@link Authenticator} lets no one else in):
 * <ul>
 *   <li>{@code POST /tenants/{tenant}/keys} (no body) → 201 {@code {"id", "tenant", "key", "created_at"}}: the key
 *       is in this answer only; jobq keeps its digest.</li>
 *   <li>{@code GET /tenants/{tenant}/keys} → 200 {@code {"keys": [{"id", "tenant", "created_at"}]}}, live ones.</li>
 *   <li>{@code DELETE /tenants/{tenant}/keys/{id}} → 204, the key refused from then on; 404 {@code key_not_found}.</li>
 * </ul>
 * Without an admin key configured the API is open and keys would protect nothing: 409 {@code keys_disabled}.
 */
final class KeyRoutes {
    private final TenantKeys tenantKeys;
    private final JobStore store;
    private final AccessKeys keys;

    KeyRoutes(TenantKeys tenantKeys, JobStore store, AccessKeys keys) {
        this.tenantKeys = tenantKeys;
        this.store = store;
        this.keys = keys;
    }

    /** A key as listed. */
    record KeyView(String id, String tenant, Instant createdAt) {
        static KeyView of(ApiKey k) {
            return new KeyView(k.id(), k.tenant().value(), k.createdAt());
        }
    }

    /** The answer that creates a key: the only one that carries it. */
    record NewKeyView(String id, String tenant, String key, Instant createdAt) {
        @Override
        public String toString() {
            return "NewKeyView[" + id + " of " + tenant + "]"; // never the key
        }
    }

    /** {@code GET /tenants/{tenant}/keys}. */
    record KeyList(List<KeyView> keys) {}

    void register(RoutesConfig routes) {
        routes.post("/tenants/{tenant}/keys", this::create);
        routes.get("/tenants/{tenant}/keys", this::list);
        routes.delete("/tenants/{tenant}/keys/{id}", this::revoke);
    }

    private TenantId tenant(Context ctx) {
        Inputs.requireNoQuery(ctx);
        if (keys.isOpen()) {
            throw new ApiException(409, "keys_disabled", "the server has no admin key (JOBQ_ADMIN_KEY): every request is"
                    + " allowed, so a tenant key would protect nothing", null);
        }
        return Inputs.read(() -> Fields.checked("tenant", () -> TenantId.of(ctx.pathParam("tenant"))));
    }

    private void create(Context ctx) {
        TenantId tenant = tenant(ctx);
        String body = ctx.body().strip();
        if (!body.isEmpty() && !body.equals("{}")) throw new ApiException(400, "unknown_field", "this endpoint takes no body", null);
        TenantKeys.NewKey made = tenantKeys.create(tenant);
        Responses.json(ctx, 201, new NewKeyView(made.stored().id(), tenant.value(), made.key(), made.stored().createdAt()));
    }

    private void list(Context ctx) {
        TenantId tenant = tenant(ctx);
        Responses.json(ctx, 200, new KeyList(store.apiKeys(tenant).stream().map(KeyView::of).toList()));
    }

    private void revoke(Context ctx) {
        TenantId tenant = tenant(ctx);
        String id = ctx.pathParam("id");
        if (!store.revokeApiKey(tenant, id)) {
            throw new ApiException(404, "key_not_found", "tenant " + tenant + " has no live key " + io.jobq.domain.job.StoredText.excerpt(id), null);
        }
        tenantKeys.forget(id);
        ctx.status(204);
    }
}
