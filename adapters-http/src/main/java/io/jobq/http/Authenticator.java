package io.jobq.http;

import io.javalin.http.Context;
import io.javalin.http.HandlerType;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The before-handler of every request: finds its {@link Principal} from {@code Authorization: Bearer <key>}
 * and refuses what that principal may not do, before any route runs (unknown routes included).
 * <ul>
 *   <li>No admin key configured ({@link AccessKeys#OPEN}): every request is allowed.</li>
 *   <li>{@code GET /health}: always allowed, for probes.</li>
 *   <li>The admin key: everything. The metrics key: {@code /metrics} only.</li>
 *   <li>A tenant's key ({@link TenantKeys}): enqueueing and reading its own jobs ({@link #TENANT_ROUTES}; the
 *       routes themselves refuse another tenant, 403, and hide its jobs, 404), and the OpenAPI document; any
 *       other endpoint is 403 {@code forbidden}.</li>
 *   <li>No key, or a key that is none of these: 401 {@code unauthorized} with {@code WWW-Authenticate: Bearer}.</li>
 *   <li>The dashboard ({@code /ui}) also takes the key from its login cookie ({@link DashboardSession}); without a
 *       valid one a browser is sent to the login page instead of a 401. A tenant key may open every dashboard
 *       page: the pages show its tenant only.</li>
 * </ul>
 */
final class Authenticator {
    private record Route(HandlerType method, Pattern path) {}

    /** What a tenant key may call. */
    static final List<String> TENANT_ROUTES = List.of("POST /jobs", "POST /jobs/batch", "GET /jobs", "GET /jobs/{id}",
            "POST /jobs/{id}/retry", "POST /jobs/{id}/cancel", "GET /openapi.json");
    private static final List<Route> TENANT = TENANT_ROUTES.stream().map(Authenticator::route).toList();

    private final AccessKeys keys;
    private final TenantKeys tenantKeys;

    Authenticator(AccessKeys keys, TenantKeys tenantKeys) {
        this.keys = keys;
        this.tenantKeys = tenantKeys;
    }

    private static Route route(String text) {
        String[] parts = text.split(" ");
        return new Route(HandlerType.findOrCreate(parts[0]), Pattern.compile(Pattern.quote(parts[1]).replace("{id}", "\\E[^/]+\\Q")));
    }

    void require(Context ctx) {
        if (keys.isOpen()) {
            Principal.OPEN.attachTo(ctx);
            return;
        }
        if (ctx.path().equals("/health")) return;
        boolean dashboard = DashboardSession.isDashboard(ctx.path());
        if (dashboard && DashboardSession.isPublic(ctx.path())) return;
        Optional<String> presented = AccessKeys.bearer(ctx.header("Authorization"))
                .or(() -> dashboard ? DashboardSession.key(ctx) : Optional.empty());
        Optional<Principal> identified = presented.flatMap(this::identify);
        if (identified.isEmpty() && dashboard) {
            DashboardSession.toLogin(ctx);
            return;
        }
        Principal who = identified.orElseThrow(() -> {
            ctx.header("WWW-Authenticate", "Bearer realm=\"jobq\"");
            return new ApiException(401, "unauthorized", presented.isEmpty()
                    ? "this endpoint needs Authorization: Bearer <key>" : "the key is not valid", null);
        });
        boolean allowed = who == Principal.ADMIN
                || (who == Principal.METRICS && ctx.path().equals("/metrics"))
                || (who.tenant().isPresent() && (dashboard || TENANT.stream()
                        .anyMatch(r -> r.method().equals(ctx.method()) && r.path().matcher(ctx.path()).matches())));
        if (!allowed) {
            throw new ApiException(403, "forbidden", who == Principal.METRICS ? "the metrics key opens GET /metrics only"
                    : "a tenant key may only enqueue and read its own jobs", null);
        }
        who.attachTo(ctx);
    }

    /** The principal {@code presented} stands for, if it is a valid key (the dashboard's login form checks with it). */
    Optional<Principal> identify(String presented) {
        // every check runs, so the time taken does not say which kind of key came closest
        boolean admin = keys.isAdmin(presented);
        boolean metrics = keys.isMetrics(presented);
        Optional<Principal> tenant = tenantKeys.tenantOf(presented).map(Principal::tenant);
        if (admin) return Optional.of(Principal.ADMIN);
        if (metrics) return Optional.of(Principal.METRICS);
        return tenant;
    }
}
