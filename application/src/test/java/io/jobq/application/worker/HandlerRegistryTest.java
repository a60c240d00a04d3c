package io.jobq.application.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.jobq.domain.job.TaskName;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HandlerRegistryTest {
    static final JobHandler NOOP = ctx -> Optional.empty();

    /** Discovered through a services file written by the test (not shipped in the test-jar). */
    public static final class GreetingProvider implements JobHandlerProvider {
        public GreetingProvider() {}

        @Override
        public Map<TaskName, JobHandler> handlers(HandlerSettings settings) {
            return Map.of(TaskName.of("greet"), NOOP, TaskName.of("wave"), NOOP);
        }
    }

    /** A provider configured by its settings: greets with {@code JOBQ_HANDLER_GREETING}. */
    public static final class ConfiguredProvider implements JobHandlerProvider {
        public ConfiguredProvider() {}

        @Override
        public Map<TaskName, JobHandler> handlers(HandlerSettings settings) {
            String greeting = settings.require("JOBQ_HANDLER_GREETING");
            return Map.of(TaskName.of("greet"), ctx -> Optional.of(JsonNodeFactory.instance.textNode(greeting)));
        }
    }

    /** What an embedding application's handler looks like: its dependencies come through the constructor. */
    record Mailer(List<String> sent) {}

    record ReceiptHandler(Mailer mailer) implements JobHandler {
        @Override
        public Optional<JsonNode> handle(JobContext ctx) {
            mailer.sent().add("receipt for job " + ctx.jobId());
            return Optional.empty();
        }
    }

    static Optional<JsonNode> run(HandlerRegistry registry, String task) throws Exception {
        return registry.find(TaskName.of(task)).orElseThrow().handle(JobContextTest.context(task, "{}", 1));
    }

    /** A class loader that sees the test classes plus a services file listing {@code providers}. */
    static ClassLoader withServices(Path dir, String... providers) throws Exception {
        Path services = dir.resolve("META-INF/services");
        Files.createDirectories(services);
        Files.writeString(services.resolve(JobHandlerProvider.class.getName()), String.join("\n", providers) + "\n");
        return new URLClassLoader(new java.net.URL[] {dir.toUri().toURL()}, HandlerRegistryTest.class.getClassLoader());
    }

    @Test
    void findsWhatWasRegisteredInCode() {
        HandlerRegistry registry = new HandlerRegistry().register("send_email", NOOP);

        assertThat(registry.find(TaskName.of("send_email"))).containsSame(NOOP);
        assertThat(registry.find(TaskName.of("other"))).isEmpty();
    }

    @Test
    void aSecondHandlerForATaskIsRefused() {
        HandlerRegistry registry = new HandlerRegistry().register("send_email", NOOP);

        assertThatThrownBy(() -> registry.register("send_email", ctx -> Optional.empty()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("task 'send_email' already has a handler");
    }

    @Test
    void anInvalidTaskNameIsRefused() {
        assertThatThrownBy(() -> new HandlerRegistry().register("send email", NOOP))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("task must be");
    }

    @Test
    void providersAreDiscoveredWithServiceLoader(@TempDir Path dir) throws Exception {
        HandlerRegistry registry = new HandlerRegistry()
                .registerDiscovered(withServices(dir, GreetingProvider.class.getName()), HandlerSettings.EMPTY);

        assertThat(registry.tasks()).extracting(TaskName::value).containsExactly("greet", "wave");
    }

    @Test
    void aDiscoveredTaskClashingWithACodeRegistrationIsRefused(@TempDir Path dir) throws Exception {
        HandlerRegistry registry = new HandlerRegistry().register("greet", NOOP);

        assertThatThrownBy(() -> registry.registerDiscovered(withServices(dir, GreetingProvider.class.getName()), HandlerSettings.EMPTY))
                .hasMessage("task 'greet' already has a handler");
    }

    @Test
    void theBuiltInsCanAlsoBeListedAsAProvider(@TempDir Path dir) throws Exception {
        HandlerRegistry registry = new HandlerRegistry()
                .registerDiscovered(withServices(dir, BuiltInHandlers.class.getName()), HandlerSettings.EMPTY);

        assertThat(registry.tasks()).hasSize(4);
    }

    @Test
    void aDiscoveredProviderMakesItsHandlersFromTheSettings(@TempDir Path dir) throws Exception {
        HandlerRegistry registry = new HandlerRegistry().registerDiscovered(withServices(dir, ConfiguredProvider.class.getName()),
                HandlerSettings.of(Map.of("JOBQ_HANDLER_GREETING", "ahoy")));

        assertThat(run(registry, "greet")).hasValue(JsonNodeFactory.instance.textNode("ahoy"));
    }

    @Test
    void aProviderRefusingItsSettingsStopsTheRegistrationNamingTheSetting() {
        assertThatThrownBy(() -> new HandlerRegistry().register(new ConfiguredProvider(), HandlerSettings.EMPTY))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("JOBQ_HANDLER_GREETING");
    }

    @Test
    void anEmbeddingApplicationPassesItsOwnObjectsThroughTheHandlersConstructor() throws Exception {
        Mailer mailer = new Mailer(new ArrayList<>());
        HandlerRegistry registry = new HandlerRegistry().register("send_receipt", new ReceiptHandler(mailer));

        run(registry, "send_receipt");

        assertThat(mailer.sent()).containsExactly("receipt for job 42");
    }

    @Test
    void theWorkerTakesASnapshot() {
        HandlerRegistry registry = new HandlerRegistry().register("a", NOOP);
        Map<TaskName, JobHandler> snapshot = registry.snapshot();
        registry.register("b", NOOP);

        assertThat(snapshot).containsOnlyKeys(TaskName.of("a"));
    }
}
