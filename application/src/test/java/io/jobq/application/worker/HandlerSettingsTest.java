package io.jobq.application.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

class HandlerSettingsTest {
    static Properties props(String... keysAndValues) {
        Properties p = new Properties();
        for (int i = 0; i < keysAndValues.length; i += 2) p.setProperty(keysAndValues[i], keysAndValues[i + 1]);
        return p;
    }

    @Test
    void theLauncherPassesOnlyPrefixedNamesAndASystemPropertyWins() {
        HandlerSettings s = HandlerSettings.fromEnvironment(
                Map.of("JOBQ_HANDLER_SMTP_HOST", "mail.env", "JOBQ_HANDLER_SMTP_PORT", "25", "DATABASE_URL", "secret", "HOME", "/root"),
                props("JOBQ_HANDLER_SMTP_HOST", "mail.prop", "java.version", "25"));

        assertThat(s.asMap()).containsOnly(
                Map.entry("JOBQ_HANDLER_SMTP_HOST", "mail.prop"), Map.entry("JOBQ_HANDLER_SMTP_PORT", "25"));
        assertThat(s.getInt("JOBQ_HANDLER_SMTP_PORT", 1, 65535, 587)).isEqualTo(25);
    }

    @Test
    void typedGettersReadTheLaunchersFormsAndFallBackWhenUnset() {
        HandlerSettings s = HandlerSettings.of(Map.of("TIMEOUT", "1.5s", "DRY_RUN", "yes", "RETRIES", " 3 "));

        assertThat(s.getDuration("TIMEOUT", Duration.ZERO)).isEqualTo(Duration.ofMillis(1500));
        assertThat(s.getBoolean("DRY_RUN", false)).isTrue();
        assertThat(s.getInt("RETRIES", 0, 10, 1)).isEqualTo(3);
        assertThat(s.getInt("UNSET", 0, 10, 7)).isEqualTo(7);
        assertThat(s.getDuration("UNSET", Duration.ofMinutes(1))).isEqualTo(Duration.ofMinutes(1));
        assertThat(s.get("UNSET")).isEmpty();
        assertThat(s.require("RETRIES")).isEqualTo(" 3 ");
    }

    @Test
    void aBadValueNamesTheKeyButNeverShowsTheValue() {
        HandlerSettings s = HandlerSettings.of(Map.of("JOBQ_HANDLER_PORT", "hunter2", "JOBQ_HANDLER_WAIT", "hunter2",
                "JOBQ_HANDLER_ON", "hunter2", "JOBQ_HANDLER_N", "99"));

        assertThatThrownBy(() -> s.getInt("JOBQ_HANDLER_PORT", 1, 65535, 25)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("invalid JOBQ_HANDLER_PORT: expected an integer from 1 to 65535");
        assertThatThrownBy(() -> s.getInt("JOBQ_HANDLER_N", 1, 10, 1)).hasMessage("invalid JOBQ_HANDLER_N: must be from 1 to 10");
        assertThatThrownBy(() -> s.getDuration("JOBQ_HANDLER_WAIT", Duration.ZERO))
                .hasMessageStartingWith("invalid JOBQ_HANDLER_WAIT: expected a duration").hasMessageNotContaining("hunter2");
        assertThatThrownBy(() -> s.getBoolean("JOBQ_HANDLER_ON", false)).hasMessage("invalid JOBQ_HANDLER_ON: expected true or false");
        assertThatThrownBy(() -> s.require("JOBQ_HANDLER_MISSING")).hasMessage("JOBQ_HANDLER_MISSING is required but not set");
        assertThat(s.toString()).doesNotContain("hunter2").contains("JOBQ_HANDLER_PORT");
    }

    @Test
    void theMapIsReadOnlyAndACopy() {
        Map<String, String> source = new java.util.HashMap<>(Map.of("A", "1"));
        HandlerSettings s = HandlerSettings.of(source);
        source.put("B", "2");

        assertThat(s.asMap()).containsOnlyKeys("A");
        assertThatThrownBy(() -> s.asMap().put("C", "3")).isInstanceOf(UnsupportedOperationException.class);
    }
}
