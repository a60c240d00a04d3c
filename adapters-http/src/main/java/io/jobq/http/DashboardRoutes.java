package io.jobq.http;

import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.javalin.http.Handler;
import io.javalin.http.HttpStatus;
import io.jobq.application.port.JobQuery;
import io.jobq.application.port.JobQueueException;
import io.jobq.application.port.JobStore;
import io.jobq.application.port.JobSummary;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.JobState;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.tenant.TenantId;
import io.jobq.http.DashboardModels.Failure;
import io.jobq.http.DashboardModels.Filter;
import io.jobq.http.DashboardModels.JobDetail;
import io.jobq.http.DashboardModels.JobList;
import io.jobq.http.DashboardModels.JobRow;
import io.jobq.http.DashboardModels.Login;
import io.jobq.http.DashboardModels.Nav;
import io.jobq.http.DashboardModels.Refresh;
import io.jobq.http.DashboardModels.StatusOption;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * The dashboard at {@code /ui}: server-rendered HTML pages (no script) over the same store and the same keys as
 * the JSON API; a tenant key sees its tenant only. {@link DashboardOverview} draws the first page.
 * <ul>
 *   <li>{@code GET /ui}: queues, tenants, the chart. {@code GET /ui/jobs?tenant=&queue=&status=&task=&after=}: the
 *       job list, newest first, 50 a page; {@code status=dead} is the dead-letter list.</li>
 *   <li>{@code GET /ui/jobs/{id}}: one job; {@code POST /ui/jobs/{id}/retry} and {@code …/cancel} act on it and
 *       redirect back to it (303), or show why not (404, 409).</li>
 *   <li>{@code GET /ui/login}, {@code POST /ui/login} (form field {@code key}), {@code POST /ui/logout}:
 *       see {@link DashboardSession}.</li>
 * </ul>
 * Bad input (a malformed filter or id) is shown on the page with the field it concerns (400), never a 500.
 */
final class DashboardRoutes {
    private static final int PAGE_SIZE = 50;
    /** A running job's page reloads itself this often, in seconds, so a user watches it finish. */
    private static final int LIVE_REFRESH = 2;
    /** Most characters of a payload, result or last error a job page shows. */
    private static final int SHOWN_CHARS = 64 * 1024;

    private final JobStore store;
    private final JobActions actions;
    private final Authenticator authenticator;
    private final boolean keysOn;
    private final HtmlPages pages = new HtmlPages();
    private final DashboardOverview overview;
    private final byte[] stylesheet = resource("ui/style.css");

    DashboardRoutes(JobStore store, Authenticator authenticator, boolean keysOn, BacklogHistory history) {
        this.store = store;
        this.actions = new JobActions(store);
        this.authenticator = authenticator;
        this.keysOn = keysOn;
        this.overview = new DashboardOverview(store, history);
    }

    void register(RoutesConfig routes) {
        routes.get("/ui", page(ctx -> pages.render(ctx, 200, "overview", overview.model(Principal.of(ctx), nav(ctx)))));
        routes.get("/ui/jobs", page(this::jobs));
        routes.get("/ui/jobs/{id}", page(this::job));
        routes.post("/ui/jobs/{id}/retry", page(ctx -> act(ctx, id -> actions.retry(Principal.of(ctx), id), "retried")));
        routes.post("/ui/jobs/{id}/cancel", page(ctx -> act(ctx, id -> actions.cancel(Principal.of(ctx), id), "cancel")));
        routes.get(DashboardSession.LOGIN, page(this::loginForm));
        routes.post(DashboardSession.LOGIN, page(this::login));
        routes.post("/ui/logout", page(this::logout));
        // a typed or bookmarked logout address: a GET changes nothing (a link elsewhere must not log anyone out)
        routes.get("/ui/logout", ctx -> {
            HtmlPages.secure(ctx);
            ctx.redirect("/ui", HttpStatus.SEE_OTHER);
        });
        routes.get("/ui/style.css", ctx -> ctx.header("Cache-Control", "max-age=3600").contentType("text/css; charset=utf-8").result(stylesheet));
    }

    private void jobs(Context ctx) {
        Filter filter = new Filter(text(ctx, "tenant"), text(ctx, "queue"), text(ctx, "task"), text(ctx, "status"),
                "on".equals(ctx.queryParam("refresh")));
        List<StatusOption> statuses = Arrays.stream(JobState.values()).map(s -> new StatusOption(s.dbName(), s.dbName().equals(filter.status()))).toList();
        String title = JobState.DEAD.dbName().equals(filter.status()) ? "Dead letters" : "Jobs";
        Refresh refresh = filter.refresh() ? new Refresh(5, null) : null;
        JobQuery query;
        try {
            query = Inputs.read(() -> query(ctx, filter));
        } catch (ApiException e) {
            pages.render(ctx, e.status(), "jobs", new JobList(title, null, nav(ctx), filter, statuses, List.of(), "/ui/jobs", null, e.getMessage(), false));
            return;
        }
        JobPage<JobSummary> page = JobPage.summaries(store, query, Principal.of(ctx));
        String next = page.next().map(id -> DashboardModels.link("/ui/jobs", join(filter.query(), "after=" + id.value()))).orElse(null);
        pages.render(ctx, 200, "jobs", new JobList(title, refresh, nav(ctx), filter, statuses, page.jobs().stream().map(JobRow::of).toList(),
                query.after().isPresent() ? DashboardModels.link("/ui/jobs", filter.query()) : null, next, null, page.jobs().isEmpty()));
    }

    private static JobQuery query(Context ctx, Filter f) {
        for (String name : List.of("tenant", "queue", "task", "status", "after")) {
            if (ctx.queryParams(name).size() > 1) throw ApiException.invalid(name, name + " must be given at most once");
        }
        Optional<TenantId> tenant = present(f.tenant()).map(v -> Fields.checked("tenant", () -> TenantId.of(v)));
        Optional<QueueName> queue = present(f.queue()).map(v -> Fields.checked("queue", () -> QueueName.of(v)));
        Optional<TaskName> task = present(f.task()).map(v -> Fields.checked("task", () -> TaskName.of(v)));
        Optional<JobState> state = present(f.status()).map(v -> Fields.checked("status", () -> JobState.fromDbName(v)));
        Optional<JobId> after = present(text(ctx, "after")).map(v -> Fields.checked("after", () -> JobId.parse("after", v)));
        return new JobQuery(tenant, queue, state, task, PAGE_SIZE, after);
    }

    private void job(Context ctx) {
        JobId id = Inputs.read(() -> JobRoutes.pathId(ctx));
        Job job = actions.get(Principal.of(ctx), id);
        // the message says what the job shows now, whatever the link says
        String message = switch (String.valueOf(ctx.queryParam("done"))) {
            case "retried" -> job.state() == JobState.DEAD ? null : "Job " + id + " was moved back to queued.";
            case "cancel" -> job.state() == JobState.CANCELLED ? "Job " + id + " was cancelled."
                    : job.cancelRequested() && !job.state().isFinal()
                            ? "Cancelling was asked: the job's worker stops it at its next heartbeat." : null;
            default -> null;
        };
        pages.render(ctx, 200, "job", detail(job, nav(ctx), message, null));
    }

    /** Runs a retry or cancel, then shows the job (303, so a reload does not post again) or why it could not. */
    private void act(Context ctx, Function<JobId, Job> action, String done) {
        DashboardSession.requireSameOrigin(ctx);
        JobId id = Inputs.read(() -> JobRoutes.pathId(ctx));
        try {
            action.apply(id);
        } catch (ApiException e) {
            if (e.status() != 409) throw e;
            pages.render(ctx, 409, "job", detail(actions.get(Principal.of(ctx), id), nav(ctx), null, e.getMessage()));
            return;
        }
        HtmlPages.secure(ctx);
        ctx.redirect("/ui/jobs/" + id.value() + "?done=" + done, HttpStatus.SEE_OTHER);
    }

    private JobDetail detail(Job job, Nav nav, String message, String error) {
        boolean live = DashboardModels.cancellable(job.state());
        String lease = job.lease().map(l -> l.owner().value() + " until " + l.expiry()).orElse(null);
        Refresh refresh = live ? new Refresh(LIVE_REFRESH, "/ui/jobs/" + job.id().value()) : null;
        return new JobDetail("Job " + job.id(), refresh, nav, JobView.of(job), JsonText.pretty(job.payload(), SHOWN_CHARS),
                job.result().map(r -> JsonText.pretty(r, SHOWN_CHARS)).orElse(null),
                job.lastError().map(e -> DashboardModels.excerpt(e, SHOWN_CHARS)).orElse(null), lease, DashboardModels.retryable(job.state()),
                live, message, error);
    }

    /** The page for a {@code /ui/…} address no route serves (the JSON API answers such a 404 in JSON). */
    void notFound(Context ctx) {
        pages.render(ctx, 404, "failure", new Failure("Not found", null, navOrNull(ctx), 404,
                "The dashboard has no page at this address."));
    }

    private void loginForm(Context ctx) {
        if (!keysOn) {
            ctx.redirect("/ui", HttpStatus.SEE_OTHER);
            return;
        }
        pages.render(ctx, 200, "login", new Login("Log in", null, null, null, DashboardSession.returnTo(ctx.queryParam("next")).orElse(null)));
    }

    private void login(Context ctx) {
        DashboardSession.requireSameOrigin(ctx);
        if (!keysOn) {
            ctx.redirect("/ui", HttpStatus.SEE_OTHER);
            return;
        }
        String key = Optional.ofNullable(ctx.formParam("key")).map(String::strip).orElse("");
        Optional<Principal> who = key.isEmpty() ? Optional.empty() : authenticator.identify(key);
        if (who.isEmpty() || who.get() == Principal.METRICS) {
            String why = key.isEmpty() ? "Enter a key." : who.isEmpty() ? "That key is not valid." : "The metrics key does not open the dashboard.";
            pages.render(ctx, 401, "login", new Login("Log in", null, null, why, DashboardSession.returnTo(ctx.formParam("next")).orElse(null)));
            return;
        }
        DashboardSession.start(ctx, key);
        HtmlPages.secure(ctx);
        ctx.redirect(DashboardSession.returnTo(ctx.formParam("next")).orElse("/ui"), HttpStatus.SEE_OTHER);
    }

    private void logout(Context ctx) {
        DashboardSession.requireSameOrigin(ctx);
        DashboardSession.end(ctx);
        HtmlPages.secure(ctx);
        ctx.redirect(DashboardSession.LOGIN, HttpStatus.SEE_OTHER);
    }

    /** Every page's errors as a page: bad input and refusals with their status, a store outage as 503. */
    private Handler page(Handler handler) {
        return ctx -> {
            try {
                handler.handle(ctx);
            } catch (ApiException e) {
                pages.render(ctx, e.status(), "failure", new Failure("Error", null, navOrNull(ctx), e.status(), e.getMessage()));
            } catch (JobQueueException e) {
                pages.render(ctx, 503, "failure", new Failure("Unavailable", null, navOrNull(ctx), 503,
                        "The job store cannot be reached just now; reload in a few seconds."));
            }
        };
    }

    private Nav nav(Context ctx) {
        return Nav.of(Principal.of(ctx), keysOn);
    }

    private Nav navOrNull(Context ctx) {
        return Principal.find(ctx).map(p -> Nav.of(p, keysOn)).orElse(null);
    }

    private static String text(Context ctx, String name) {
        String v = ctx.queryParam(name);
        return v == null ? "" : v.strip();
    }

    private static Optional<String> present(String v) {
        return v == null || v.isEmpty() ? Optional.empty() : Optional.of(v);
    }

    private static String join(String a, String b) {
        return a.isEmpty() ? b : a + "&" + b;
    }

    private static byte[] resource(String name) {
        try (InputStream in = DashboardRoutes.class.getResourceAsStream(name)) {
            if (in == null) throw new IllegalStateException("missing resource io/jobq/http/" + name);
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
