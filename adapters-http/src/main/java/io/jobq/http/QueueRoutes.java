package io.jobq.http;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.jobq.application.port.JobStore;
import io.jobq.application.port.QueueSettings;
import io.jobq.domain.fairness.Fairness;
import io.jobq.domain.job.QueueName;
import java.util.Set;

/**
 * {@code PUT /queues/{queue}} {@code {"fairness": "work"}} → 200 {@code {"queue", "fairness"}}.
 *
 * <p>{@code fairness} (required): {@code "jobs"} (the default for a queue never set) charges each job the
 * same, so backlogged tenants run equal numbers of jobs; {@code "work"} charges each job its measured run
 * time, so they get equal worker time. Applies to tags handed out afterwards: see {@link JobStore#configureQueue}.
 */
final class QueueRoutes {
    static final Set<String> FIELDS = Set.of("fairness");

    private final JobStore store;
    private final HttpSettings settings;

    QueueRoutes(JobStore store, HttpSettings settings) {
        this.store = store;
        this.settings = settings;
    }

    void register(RoutesConfig routes) {
        routes.put("/queues/{queue}", this::configure);
    }

    private void configure(Context ctx) {
        QueueName queue = Inputs.read(() -> Fields.checked("queue", () -> QueueName.of(ctx.pathParam("queue"))));
        Fairness fairness = Inputs.read(() -> fairness(JsonBodies.readObject(ctx, settings.maxBodyBytes())));
        QueueSettings set = store.configureQueue(queue, fairness);
        Responses.json(ctx, 200, new Views.QueueView(set.queue().value(), set.fairness().wireName()));
    }

    /** @throws ApiException 400 naming {@code fairness} when it is missing or not one of the two names */
    private static Fairness fairness(ObjectNode body) {
        Fields f = new Fields(body, FIELDS);
        f.required("fairness");
        return f.string("fairness", Fairness::of).orElseThrow();
    }
}
