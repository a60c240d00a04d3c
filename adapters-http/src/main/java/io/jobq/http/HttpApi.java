package io.jobq.http;

import io.javalin.Javalin;
import io.javalin.http.Context;
import io.javalin.http.HttpResponseException;
import io.javalin.http.MethodNotAllowedResponse;
import io.javalin.http.NotFoundResponse;
import io.javalin.router.Endpoint;
import io.jobq.application.port.JobStore;
import io.jobq.application.port.StoreConflictException;
import io.jobq.application.port.StoreUnavailableException;
import io.jobq.domain.job.StoredText;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.Objects;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * jobq's HTTP API: a configured Javalin server over a {@link JobStore}.
 *
 * <pre>{@code
 * PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
 * HikariDataSource pool = PostgresPool.create(url, 10, "jobq-api", Duration.ofSeconds(5));
 * pool.setMetricsTrackerFactory(new MicrometerMetricsTrackerFactory(registry)); // HikariCP pool metrics
 * HttpApi api = HttpApi.create(new PostgresJobStore(pool), registry, HttpSettings.DEFAULTS).start(8000);
 * ...
 * api.stop();
 * }</pre>
 *
 * Every meter bound to {@code registry} (by this class, by bootstrap, by HikariCP) is exposed at
 * {@code GET /metrics}. {@code create} binds JVM memory, GC, thread and processor metrics to it.
 *
 * <p>Errors: every failure becomes a {@link ProblemResponse} in one place ({@link #mapException}):
 * {@link ApiException} → its status; Javalin's 404 / 405 / 413 → the same status as JSON;
 * {@link StoreUnavailableException} → 503 {@code store_unavailable} with {@code Retry-After};
 * {@link StoreConflictException} (a concurrent transaction aborted the write, and the store's own
 * retries ran out) → 503 {@code concurrent_update} with {@code Retry-After};
 * {@link IllegalArgumentException} (input the store refused) → 400
 * {@code bad_request}; anything else → 500 {@code internal_error} with a reference id, the exception
 * logged under it (never in the body). Whatever goes wrong while a request is read is a 4xx
 * ({@link Inputs}), and every error body is at most 4 KiB ({@link ProblemResponse}).
 */
public final class HttpApi {
    private static final Logger log = LoggerFactory.getLogger(HttpApi.class);

    private final Javalin app;
    private final PrometheusMeterRegistry registry;
    private final JvmGcMetrics gcMetrics;
    private final BacklogHistory history;

    private HttpApi(Javalin app, PrometheusMeterRegistry registry, JvmGcMetrics gcMetrics, BacklogHistory history) {
        this.app = app;
        this.registry = registry;
        this.gcMetrics = gcMetrics;
        this.history = history;
    }

    /**
     * Builds the server (not started).
     *
     * @param store every request ends in one call (or two, for a listing's next-page probe) on it
     * @param registry the registry {@code /metrics} scrapes; share it with whatever else should be exported
     * @param settings body limit, Retry-After, metrics caching
     */
    public static HttpApi create(JobStore store, PrometheusMeterRegistry registry, HttpSettings settings) {
        Objects.requireNonNull(store, "store");
        Objects.requireNonNull(registry, "registry");
        Objects.requireNonNull(settings, "settings");
        new JvmMemoryMetrics().bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        JvmGcMetrics gc = new JvmGcMetrics();
        gc.bindTo(registry);
        JobMetrics metrics = new JobMetrics(store, registry, settings);
        BacklogHistory history = new BacklogHistory(store);
        Javalin app = Javalin.create(config -> {
            config.startup.showJavalinBanner = false;
            config.startup.showOldJavalinVersionWarning = false;
            // a known path with the wrong method answers 405, not 404
            config.http.prefer405over404 = true;
            config.http.maxRequestSize = settings.maxBodyBytes();
            config.jetty.modifyServer(server -> server.setErrorHandler(new JsonErrorHandler()));
            config.requestLogger.http((ctx, ms) -> metrics.request(ctx.method().name(), route(ctx), ctx.statusCode(), ms));
            config.routes.exception(Exception.class, (e, ctx) -> mapException(e, ctx, settings));
            TenantKeys tenantKeys = new TenantKeys(store);
            Authenticator authenticator = new Authenticator(settings.keys(), tenantKeys);
            config.routes.before(authenticator::require); // before any route, unknown ones included
            // Javalin answers an unknown route or a wrong method itself, in plain text and without passing
            // through exception handlers; these turn exactly those answers (no endpoint matched) into JSON.
            DashboardRoutes dashboard = new DashboardRoutes(store, authenticator, !settings.keys().isOpen(), history);
            config.routes.error(404, ctx -> {
                if (ctx.endpoints().matchedHttpEndpoint() != null) return;
                // a browser that mistypes a dashboard address gets a page, with the dashboard's headers
                if (DashboardSession.isDashboard(ctx.path())) dashboard.notFound(ctx);
                else mapException(new NotFoundResponse(), ctx, settings);
            });
            config.routes.error(405, ctx -> mapException(new MethodNotAllowedResponse(), ctx, settings));
            new JobRoutes(store, metrics, settings).register(config.routes);
            new TenantRoutes(store, settings).register(config.routes);
            new QueueRoutes(store, settings).register(config.routes);
            new WorkerRoutes(store).register(config.routes);
            new KeyRoutes(tenantKeys, store, settings.keys()).register(config.routes);
            new ScheduleRoutes(store, settings).register(config.routes);
            new OpsRoutes(store, registry, metrics).register(config.routes);
            dashboard.register(config.routes);
        });
        return new HttpApi(app, registry, gc, history);
    }

    /**
     * Starts listening on every interface.
     *
     * @param port TCP port; 0 picks a free one (see {@link #port()})
     * @return this
     */
    public HttpApi start(int port) {
        app.start(port);
        return this;
    }

    /**
     * Starts listening on one address.
     *
     * @param host the address to bind, e.g. {@code 127.0.0.1} (this machine only) or {@code 0.0.0.0} (every interface)
     * @param port TCP port; 0 picks a free one
     * @return this
     */
    public HttpApi start(String host, int port) {
        app.start(host, port);
        return this;
    }

    /** The port listened on, once started. */
    public int port() {
        return app.port();
    }

    /** Stops the server (in-flight requests are finished by Jetty's graceful stop), the dashboard's sampler, and unbinds GC metrics. */
    public void stop() {
        app.stop();
        history.close();
        gcMetrics.close();
    }

    /** The registry {@code /metrics} exposes: bind further meters (e.g. HikariCP's) here. */
    public PrometheusMeterRegistry registry() {
        return registry;
    }

    /** The underlying Javalin app, e.g. for tests or to add routes before starting. */
    public Javalin javalin() {
        return app;
    }

    /** The one exception mapping of the API. */
    static void mapException(Exception e, Context ctx, HttpSettings settings) {
        switch (e) {
            case ApiException api -> Responses.json(ctx, api.status(), api.problem());
            case StoreUnavailableException unavailable -> {
                log.warn("{} {}: store unavailable: {}", ctx.method(), ctx.path(), unavailable.getMessage());
                ctx.header("Retry-After", Long.toString(settings.retryAfter().toSeconds()));
                Responses.json(ctx, 503, ProblemResponse.of("store_unavailable",
                        "the job store is unavailable; retry after " + settings.retryAfter().toSeconds() + " s", null));
            }
            case StoreConflictException conflict -> {
                // The store already retried; the request changed nothing and can be sent again as it is.
                log.warn("{} {}: {}", ctx.method(), ctx.path(), conflict.getMessage());
                ctx.header("Retry-After", Long.toString(settings.retryAfter().toSeconds()));
                Responses.json(ctx, 503, ProblemResponse.of("concurrent_update",
                        "the request collided with a concurrent update and changed nothing; retry after "
                                + settings.retryAfter().toSeconds() + " s", null));
            }
            case HttpResponseException http -> httpStatus(ctx, http.getStatus(), http.getMessage());
            case IllegalArgumentException refused -> {
                // the store refused the input (the port's contract for, e.g., a payload PostgreSQL cannot hold)
                log.warn("{} {}: refused: {}", ctx.method(), ctx.path(), refused.getMessage());
                Responses.json(ctx, 400, ProblemResponse.of("bad_request", "the request was refused: " + refused.getMessage(), null));
            }
            default -> {
                String ref = UUID.randomUUID().toString();
                log.error("{} {} failed (ref {})", ctx.method(), ctx.path(), ref, e);
                Responses.json(ctx, 500, ProblemResponse.of("internal_error", "internal error (ref " + ref + "); see the server log", null));
            }
        }
    }

    private static void httpStatus(Context ctx, int status, String reason) {
        String code = switch (status) {
            case 404 -> "not_found";
            case 405 -> "method_not_allowed";
            case 413 -> "payload_too_large";
            default -> status >= 500 ? "internal_error" : "bad_request";
        };
        String message = switch (status) {
            case 404 -> "no route for " + ctx.method() + " " + StoredText.excerpt(ctx.path());
            case 405 -> "method " + ctx.method() + " is not allowed on " + StoredText.excerpt(ctx.path());
            default -> reason == null ? "status " + status : reason;
        };
        Responses.json(ctx, status, ProblemResponse.of(code, message, null));
    }

    /** The matched route template for metrics, so /jobs/1 and /jobs/2 share one series. */
    private static String route(Context ctx) {
        Endpoint matched = ctx.endpoints().matchedHttpEndpoint();
        return matched == null ? "unmatched" : matched.path;
    }
}
