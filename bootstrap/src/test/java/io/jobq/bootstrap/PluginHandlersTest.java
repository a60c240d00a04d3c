package io.jobq.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.jobq.application.worker.HandlerRegistry;
import io.jobq.application.worker.HandlerSettings;
import io.jobq.application.worker.JobHandler;
import io.jobq.application.worker.JobHandlerProvider;
import io.jobq.domain.job.TaskName;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How {@code jobq worker} builds its handlers: built-ins, plus plug-in providers made from {@code JOBQ_HANDLER_*}. */
class PluginHandlersTest {
    /** Registers the task named by {@code JOBQ_HANDLER_TASK}; requires it. */
    public static final class NamedByItsSettings implements JobHandlerProvider {
        public NamedByItsSettings() {}

        @Override
        public Map<TaskName, JobHandler> handlers(HandlerSettings settings) {
            return Map.of(TaskName.of(settings.require("JOBQ_HANDLER_TASK")), ctx -> Optional.empty());
        }
    }

    static ClassLoader plugin(Path dir) throws Exception {
        Path services = dir.resolve("META-INF/services");
        Files.createDirectories(services);
        Files.writeString(services.resolve(JobHandlerProvider.class.getName()), NamedByItsSettings.class.getName() + "\n");
        return new URLClassLoader(new URL[] {dir.toUri().toURL()}, PluginHandlersTest.class.getClassLoader());
    }

    @Test
    void aPluginProviderGetsThePrefixedVariablesAndSystemProperties(@TempDir Path dir) throws Exception {
        Properties props = new Properties();
        props.setProperty("JOBQ_HANDLER_TASK", "from_property");

        HandlerRegistry fromEnv = Roles.handlers(plugin(dir), Map.of("JOBQ_HANDLER_TASK", "from_env"), new Properties());
        HandlerRegistry fromProp = Roles.handlers(plugin(dir), Map.of("JOBQ_HANDLER_TASK", "from_env"), props);

        assertThat(fromEnv.tasks()).extracting(TaskName::value).contains("from_env", "noop").doesNotContain("from_property");
        assertThat(fromProp.tasks()).extracting(TaskName::value).contains("from_property").doesNotContain("from_env");
    }

    @Test
    void aProviderRefusingItsSettingsIsAStartUpFailureNamingTheSetting(@TempDir Path dir) throws Exception {
        assertThatThrownBy(() -> Roles.handlers(plugin(dir), Map.of("TASK", "unprefixed"), new Properties()))
                .isInstanceOf(LauncherException.class)
                .hasMessage("cannot load the handlers: JOBQ_HANDLER_TASK is required but not set");
    }
}
