package io.jobq.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.jobq.application.port.JobStore;
import io.jobq.application.port.QueueSettings;
import io.jobq.application.port.QueueUpdate;
import io.jobq.application.port.Retention;
import io.jobq.domain.fairness.Fairness;
import io.jobq.domain.job.QueueName;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;

/**
 * {@code PUT /queues/{queue}} {@code {"fairness": "work", "retention": {"done": 86400}}} → 200
 * {@code {"queue", "fairness", "retention": {"done", "dead", "cancelled"}}} (seconds). At least one of the
 * two fields; what is left out stays as it is.
 *
 * <ul>
 *   <li>{@code fairness}: {@code "jobs"} (the default for a queue never set) charges each job the same, so
 *       backlogged tenants run equal numbers of jobs; {@code "work"} charges each job its measured run
 *       time, so they get equal worker time. Applies to tags handed out afterwards: see
 *       {@link JobStore#configureQueue}.</li>
 *   <li>{@code retention}: how long finished jobs are kept, per state, in whole seconds from 0 (for ever)
 *       to 3,153,600,000 (100 years); defaults 604,800 (7 days) for done and cancelled, 2,592,000 (30 days)
 *       for dead. Maintenance deletes older ones ({@link JobStore#deleteFinished}).</li>
 * </ul>
 */
final class QueueRoutes {
    static final Set<String> FIELDS = Set.of("fairness", "retention");
    static final Set<String> RETENTION_FIELDS = Set.of("done", "dead", "cancelled");

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
        Inputs.requireNoQuery(ctx);
        QueueName queue = Inputs.read(() -> Fields.checked("queue", () -> QueueName.of(ctx.pathParam("queue"))));
        QueueUpdate update = Inputs.read(() -> update(queue, JsonBodies.readObject(ctx, settings.maxBodyBytes())));
        QueueSettings set = store.configureQueue(update);
        Retention r = set.retention();
        Responses.json(ctx, 200, new Views.QueueView(set.queue().value(), set.fairness().wireName(),
                new Views.RetentionView(r.done().toSeconds(), r.dead().toSeconds(), r.cancelled().toSeconds())));
    }

    /** @throws ApiException 400 naming the field at fault ({@code retention.done}, …) */
    private static QueueUpdate update(QueueName queue, ObjectNode body) {
        Fields f = new Fields(body, FIELDS);
        Optional<Fairness> fairness = f.string("fairness", Fairness::of);
        Optional<JsonNode> retention = f.optional("retention");
        if (fairness.isEmpty() && retention.isEmpty()) {
            throw new ApiException(400, "missing_field", "fairness or retention is required", "fairness");
        }
        if (retention.isEmpty()) return QueueUpdate.fairness(queue, fairness.get());
        if (!retention.get().isObject()) {
            throw ApiException.invalid("retention", "retention must be an object such as {\"done\": 86400}");
        }
        Fields r = new Fields((ObjectNode) retention.get(), RETENTION_FIELDS, "retention.");
        QueueUpdate update = new QueueUpdate(queue, fairness, keep(r, "done"), keep(r, "dead"), keep(r, "cancelled"));
        if (update.keepDone().isEmpty() && update.keepDead().isEmpty() && update.keepCancelled().isEmpty()) {
            throw new ApiException(400, "missing_field", "retention needs at least one of done, dead, cancelled", "retention.done");
        }
        return update;
    }

    private static Optional<Duration> keep(Fields r, String state) {
        String name = "retention." + state;
        JsonNode n = r.optional(state).orElse(null);
        if (n == null) return Optional.empty();
        if (!n.isIntegralNumber()) throw ApiException.invalid(name, name + " must be a whole number of seconds");
        BigDecimal seconds = n.decimalValue();
        if (seconds.signum() < 0 || seconds.compareTo(BigDecimal.valueOf(Retention.MAX.toSeconds())) > 0) {
            throw ApiException.invalid(name, name + " must be 0 (keep for ever) to " + Retention.MAX.toSeconds() + " seconds");
        }
        return Optional.of(Duration.ofSeconds(seconds.longValueExact()));
    }
}
