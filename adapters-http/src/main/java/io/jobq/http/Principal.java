package io.jobq.http;

import io.javalin.http.Context;
import io.jobq.domain.tenant.TenantId;
import java.util.Optional;

/**
 * Who a request speaks for, as {@link Authenticator} found out: anyone (no admin key configured), the admin,
 * a scraper with the metrics key, or one tenant with its key. Routes that scope by tenant read it with
 * {@link #of}.
 *
 * @param tenant present for a tenant key: the request may only enqueue as, and see, this tenant
 */
record Principal(String kind, Optional<TenantId> tenant) {
    static final Principal OPEN = new Principal("open", Optional.empty());
    static final Principal ADMIN = new Principal("admin", Optional.empty());
    static final Principal METRICS = new Principal("metrics", Optional.empty());

    private static final String ATTRIBUTE = "jobq.principal";

    static Principal tenant(TenantId tenant) {
        return new Principal("tenant", Optional.of(tenant));
    }

    /**
     * The request's principal.
     *
     * @throws IllegalStateException (a 500: a fault of the server) when the authenticator set none, so that a
     *     route it did not guard can never default to open access
     */
    static Principal of(Context ctx) {
        Principal p = ctx.attribute(ATTRIBUTE);
        if (p == null) throw new IllegalStateException("no principal for " + ctx.path() + ": the authenticator did not run");
        return p;
    }

    /** The request's principal, if the authenticator set one (error pages use it; routes use {@link #of}). */
    static Optional<Principal> find(Context ctx) {
        return Optional.ofNullable(ctx.attribute(ATTRIBUTE));
    }

    void attachTo(Context ctx) {
        ctx.attribute(ATTRIBUTE, this);
    }

    /**
     * For a tenant key, refuses a request that names another tenant.
     *
     * @throws ApiException 403 {@code forbidden} naming {@code field}
     */
    void requireTenant(TenantId named, String field) {
        if (tenant.isPresent() && !tenant.get().equals(named)) {
            throw new ApiException(403, "forbidden", "this key may only act for tenant " + tenant.get(), field);
        }
    }

    /** Whether this principal may see a job of {@code owner} (others answer as if the job did not exist). */
    boolean sees(TenantId owner) {
        return tenant.isEmpty() || tenant.get().equals(owner);
    }
}
