package io.jobq.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.jobq.http.AccessKeys;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The launcher's API key settings: where keys come from, and that no error ever quotes one. */
class ApiAccessTest {
    static final String KEY = "k3y-0123456789-abcdefghij-XYZ";

    @Test
    void noKeyLeavesTheApiOpenAndBindsThisMachineOnly() {
        Settings s = Settings.defaults();
        assertThat(ApiAccess.keys(s).isOpen()).isTrue();
        assertThat(s.get(Settings.BIND)).isEqualTo("127.0.0.1");
    }

    @Test
    void theKeyComesFromTheVariableOrTheFile(@TempDir Path dir) throws Exception {
        assertThat(ApiAccess.keys(Settings.resolve(Map.of("JOBQ_ADMIN_KEY", KEY), Map.of())).isOpen()).isFalse();
        Path file = dir.resolve("admin.key");
        Files.writeString(file, KEY + "\n");
        assertThat(ApiAccess.keys(Settings.resolve(Map.of("JOBQ_ADMIN_KEY_FILE", file.toString()), Map.of())).isOpen()).isFalse();
        assertThatThrownBy(() -> ApiAccess.keys(Settings.resolve(Map.of("JOBQ_ADMIN_KEY", KEY, "JOBQ_ADMIN_KEY_FILE",
                file.toString()), Map.of()))).isInstanceOf(Settings.InvalidSettingsException.class).hasMessageContaining("both set");
        assertThatThrownBy(() -> ApiAccess.keys(Settings.resolve(Map.of("JOBQ_ADMIN_KEY_FILE", dir.resolve("missing").toString()),
                Map.of()))).isInstanceOf(LauncherException.class).hasMessageContaining("cannot read");
    }

    @Test
    void aRefusedKeyIsNeverQuoted() {
        String weak = "weak-but-secret";
        assertThatThrownBy(() -> ApiAccess.keys(Settings.resolve(Map.of("JOBQ_ADMIN_KEY", weak), Map.of())))
                .isInstanceOf(Settings.InvalidSettingsException.class).hasMessageContaining("at least " + AccessKeys.MIN_KEY_LENGTH)
                .hasMessageStartingWith("invalid JOBQ_ADMIN_KEY=<hidden>: ")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain(weak));
        assertThatThrownBy(() -> ApiAccess.keys(Settings.resolve(Map.of("JOBQ_METRICS_KEY", KEY), Map.of())))
                .isInstanceOf(Settings.InvalidSettingsException.class).hasMessageStartingWith("invalid JOBQ_METRICS_KEY=<hidden>: ")
                .hasMessageContaining("needs an admin key").satisfies(e -> assertThat(e.getMessage()).doesNotContain(KEY));
    }

    @Test
    void aKeySetButEmptyIsRefusedRatherThanLeavingTheApiOpen() {
        for (String blank : new String[] {"", "   "}) {
            assertThatThrownBy(() -> Settings.resolve(Map.of("JOBQ_ADMIN_KEY", blank), Map.of()))
                    .isInstanceOf(Settings.InvalidSettingsException.class).hasMessageContaining("JOBQ_ADMIN_KEY")
                    .hasMessageContaining("set but empty");
        }
        assertThatThrownBy(() -> Settings.resolve(Map.of("JOBQ_METRICS_KEY", ""), Map.of()))
                .hasMessageContaining("JOBQ_METRICS_KEY");
    }

    @Test
    void aBadBindAddressIsNamed() {
        assertThatThrownBy(() -> Settings.resolve(Map.of("JOBQ_BIND", "every interface"), Map.of()))
                .isInstanceOf(Settings.InvalidSettingsException.class).hasMessageContaining("JOBQ_BIND");
    }
}
