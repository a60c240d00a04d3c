package io.jobq.http;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.jobq.application.port.JobStore;
import io.jobq.application.port.NewJob;
import io.jobq.application.port.Schedule;
import io.jobq.application.port.ScheduleDefinition;
import io.jobq.application.port.ScheduleStore;
import io.jobq.application.port.ScheduleStore.ScheduleWrite;
import io.jobq.application.schedule.CronSchedule;
import io.jobq.domain.job.Identifier;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobLimits;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.schedule.ScheduleName;
import io.jobq.domain.tenant.TenantId;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Cron schedules ({@link CronSchedule} for the syntax, time zones and the missed-tick policy):
 * <ul>
 *   <li>{@code PUT /schedules/{name}} {@code {"cron": "0 3 * * *", "task": "report", "payload": {…},
 *       "tenant": "acme", "queue": "default", "timezone": "Europe/Berlin", "max_attempts": 5}} → 201 created or
 *       200 replaced, with the schedule; {@code cron} and {@code task} are required, the rest default as for
 *       {@code POST /jobs} and {@code timezone} to {@code UTC}. A {@code warning} as for an enqueue when no live
 *       worker runs the task.</li>
 *   <li>{@code GET /schedules?after=&limit=} → 200 {@code {"schedules": […], "next": "name"}} by name, pages
 *       as {@code GET /jobs}'s (limit 1-500, default 50; a page ends at 4 Mi characters of payloads; {@code next}
 *       null on the last page); {@code GET /schedules/{name}} → 200 the schedule, 404 {@code schedule_not_found}.</li>
 *   <li>{@code DELETE /schedules/{name}} → 204; 404 {@code schedule_not_found}. Jobs it enqueued stay.</li>
 * </ul>
 * A schedule answers as {@link ScheduleView}.
 */
final class ScheduleRoutes {
    static final Set<String> FIELDS = Set.of("cron", "task", "payload", "tenant", "queue", "timezone", "max_attempts");
    private static final Set<String> LIST_PARAMS = Set.of("after", "limit");

    private final JobStore store;
    private final HttpSettings settings;
    private final LiveHandlers liveHandlers;

    ScheduleRoutes(JobStore store, HttpSettings settings) {
        this.store = store;
        this.settings = settings;
        this.liveHandlers = new LiveHandlers(store);
    }

    void register(RoutesConfig routes) {
        routes.put("/schedules/{name}", this::put);
        routes.get("/schedules", this::list);
        routes.get("/schedules/{name}", this::get);
        routes.delete("/schedules/{name}", this::delete);
    }

    private void put(Context ctx) {
        Inputs.requireNoQuery(ctx);
        ScheduleName name = pathName(ctx);
        ScheduleDefinition definition = Inputs.read(() -> definition(name, JsonBodies.readObject(ctx, settings.maxBodyBytes())));
        ScheduleWrite write = store.putSchedule(definition);
        ObjectNode body = Responses.OUT.valueToTree(ScheduleView.of(write.schedule(), Instant.now()));
        NewJob job = definition.job();
        liveHandlers.warning(job.queue(), job.task()).ifPresent(w -> body.put("warning", w));
        Responses.json(ctx, write.created() ? 201 : 200, body);
    }

    /** The query of {@code GET /schedules}: the page's start and size. */
    private record ListQuery(String after, int limit) {}

    private void list(Context ctx) {
        // read apart from the store call: a store outage must answer 503, not the 400 of an unreadable request
        ListQuery q = Inputs.read(() -> listQuery(ctx));
        ScheduleStore.SchedulePage page = store.schedules(q.after(), q.limit());
        Instant now = Instant.now();
        List<ScheduleView> shown = page.schedules().stream().map(s -> ScheduleView.of(s, now)).toList();
        Responses.json(ctx, 200, new ScheduleView.ScheduleList(shown, page.next().orElse(null)));
    }

    /** @throws ApiException 400 naming the parameter at fault */
    private static ListQuery listQuery(Context ctx) {
        ListParams.requireOnly(ctx, LIST_PARAMS);
        int limit = ListParams.limit(ctx);
        // any name a page can end on, a hand-written one the domain refuses included: as long as the column allows
        String after = ListParams.param(ctx, "after").map(v -> Fields.checked("after", () -> {
            // a NUL (%00) no stored name holds, and PostgreSQL refuses it in a text parameter (a 500 otherwise)
            if (v.isEmpty() || v.length() > Identifier.MAX_LENGTH || v.indexOf('\u0000') >= 0) {
                throw new IllegalArgumentException("after must be the next of a previous page: 1-" + Identifier.MAX_LENGTH
                        + " characters, no NUL");
            }
            return v;
        })).orElse("");
        return new ListQuery(after, limit);
    }

    private void get(Context ctx) {
        Inputs.requireNoQuery(ctx);
        ScheduleName name = pathName(ctx);
        Schedule s = store.schedule(name).orElseThrow(() -> notFound(name));
        Responses.json(ctx, 200, ScheduleView.of(s, Instant.now()));
    }

    private void delete(Context ctx) {
        Inputs.requireNoQuery(ctx);
        ScheduleName name = pathName(ctx);
        if (!store.deleteSchedule(name)) throw notFound(name);
        ctx.status(204);
    }

    private static ScheduleName pathName(Context ctx) {
        return Inputs.read(() -> Fields.checked("name", () -> ScheduleName.of(ctx.pathParam("name"))));
    }

    private static ApiException notFound(ScheduleName name) {
        return new ApiException(404, "schedule_not_found", "no schedule named " + name, null);
    }

    /** @throws ApiException 400 naming the first field at fault */
    private static ScheduleDefinition definition(ScheduleName name, ObjectNode body) {
        Fields f = new Fields(body, FIELDS);
        String cronText = Fields.checked("cron", () -> {
            if (!f.required("cron").isTextual()) throw new IllegalArgumentException("cron must be a string such as \"0 3 * * *\"");
            return f.required("cron").textValue();
        });
        ZoneId zone = f.string("timezone", CronSchedule::zone).orElse(ZoneId.of("UTC"));
        CronSchedule cron = Fields.checked("cron", () -> CronSchedule.parse(cronText, zone));
        String task = f.requiredIdentifier("task");
        String tenant = f.identifierOr("tenant", TenantId.DEFAULT.value());
        String queue = f.identifierOr("queue", QueueName.DEFAULT.value());
        int maxAttempts = f.integerOr("max_attempts", JobLimits::maxAttemptsOf, Job.DEFAULT_MAX_ATTEMPTS);
        String payload = EnqueueJobRequest.payloadOf(body);
        NewJob job = new NewJob(TenantId.of(tenant), QueueName.of(queue), TaskName.of(task), payload, maxAttempts,
                Duration.ZERO, Optional.empty());
        return new ScheduleDefinition(name, cron, job);
    }
}
