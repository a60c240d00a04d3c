package io.jobq.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import io.javalin.http.HandlerType;
import io.javalin.router.ParsedEndpoint;
import java.lang.reflect.RecordComponent;
import java.util.Arrays;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code GET /openapi.json} against the code: the document's operations are exactly the server's routes,
 * its request schemas list exactly the fields each endpoint accepts, and its answer schemas exactly the
 * fields each view serialises. A route or a field added without the document fails here.
 */
class OpenApiDocumentTest extends ApiTestCase {
    private static final Set<HandlerType> METHODS = Set.of(HandlerType.GET, HandlerType.POST, HandlerType.PUT, HandlerType.DELETE,
            HandlerType.PATCH);

    private JsonNode document() {
        ApiClient.Reply r = f.client().get("/openapi.json?tool=anything");
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        return r.json();
    }

    @Test
    void isOpenApi31AndDescribesEveryRouteAndNothingElse() {
        JsonNode doc = document();
        assertThat(doc.get("openapi").asText()).isEqualTo("3.1.0");
        Set<String> documented = new TreeSet<>();
        doc.get("paths").properties().forEach(p -> p.getValue().properties()
                .forEach(m -> documented.add(m.getKey().toUpperCase(Locale.ROOT) + " " + p.getKey())));
        Set<String> routes = new TreeSet<>();
        for (ParsedEndpoint e : f.api().javalin().unsafe.internalRouter.allHttpHandlers()) {
            // the dashboard's HTML pages are for browsers, not part of the JSON API the document describes
            if (METHODS.contains(e.endpoint.method) && !DashboardSession.isDashboard(e.endpoint.path)) {
                routes.add(e.endpoint.method.name() + " " + e.endpoint.path);
            }
        }
        assertThat(routes).as("routes the server has").isNotEmpty();
        assertThat(documented).isEqualTo(routes);
    }

    @Test
    void everyReferenceResolves() {
        JsonNode doc = document();
        Set<String> refs = new TreeSet<>();
        collectRefs(doc, refs);
        assertThat(refs).isNotEmpty();
        for (String ref : refs) assertThat(doc.at(ref.substring(1)).isMissingNode()).as(ref).isFalse();
    }

    private static void collectRefs(JsonNode node, Set<String> out) {
        if (node.isObject()) {
            node.properties().forEach(e -> {
                if (e.getKey().equals("$ref")) out.add(e.getValue().asText());
                else collectRefs(e.getValue(), out);
            });
        } else if (node.isArray()) {
            node.forEach(n -> collectRefs(n, out));
        }
    }

    static java.util.stream.Stream<Arguments> requestSchemas() {
        return java.util.stream.Stream.of(
                Arguments.of("NewJob", EnqueueJobRequest.FIELDS),
                Arguments.of("NewJobBatch", EnqueueBatchRequest.FIELDS),
                Arguments.of("TenantUpdate", TenantRequest.FIELDS),
                Arguments.of("QueueUpdate", QueueRoutes.FIELDS),
                Arguments.of("RetentionUpdate", QueueRoutes.RETENTION_FIELDS),
                Arguments.of("ScheduleDefinition", ScheduleRoutes.FIELDS));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("requestSchemas")
    void requestSchemasListExactlyTheFieldsTheEndpointAccepts(String schema, Set<String> fields) {
        assertThat(properties(schema)).isEqualTo(new TreeSet<>(fields));
    }

    static java.util.stream.Stream<Arguments> answerSchemas() {
        return java.util.stream.Stream.of(
                Arguments.of("Job", JobView.class),
                Arguments.of("JobPage", Views.JobPage.class),
                Arguments.of("BatchCreated", Views.BatchCreated.class),
                Arguments.of("TenantSettings", Views.TenantView.class),
                Arguments.of("QueueSettings", Views.QueueView.class),
                Arguments.of("Retention", Views.RetentionView.class),
                Arguments.of("Schedule", ScheduleView.class),
                Arguments.of("ScheduleList", ScheduleView.ScheduleList.class),
                Arguments.of("Worker", Views.WorkerView.class),
                Arguments.of("WorkerList", Views.WorkerList.class),
                Arguments.of("Stats", Views.Stats.class),
                Arguments.of("Health", Views.Health.class),
                Arguments.of("Problem", ProblemResponse.class),
                Arguments.of("NewKey", KeyRoutes.NewKeyView.class),
                Arguments.of("Key", KeyRoutes.KeyView.class),
                Arguments.of("KeyList", KeyRoutes.KeyList.class));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("answerSchemas")
    void answerSchemasListExactlyTheFieldsTheViewHas(String schema, Class<? extends Record> view) {
        Set<String> components = Arrays.stream(view.getRecordComponents()).map(RecordComponent::getName)
                .map(n -> new PropertyNamingStrategies.SnakeCaseStrategy().translate(n)).collect(Collectors.toCollection(TreeSet::new));
        assertThat(properties(schema)).isEqualTo(components);
    }

    private Set<String> properties(String schema) {
        JsonNode s = document().at("/components/schemas/" + schema + "/properties");
        assertThat(s.isObject()).as(schema + " has properties").isTrue();
        return s.properties().stream().map(java.util.Map.Entry::getKey).collect(Collectors.toCollection(TreeSet::new));
    }
}
