package io.jobq.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class HttpSettingsTest {

    @Test
    void defaultsAreTheDocumentedOnes() {
        assertThat(HttpSettings.DEFAULTS).isEqualTo(new HttpSettings(1_048_576, Duration.ofSeconds(5), Duration.ofSeconds(1), 10, AccessKeys.OPEN));
    }

    @Test
    void aBuilderChangesOnlyTheFieldsItIsGiven() {
        HttpSettings s = HttpSettings.builder().retryAfter(Duration.ofSeconds(7)).topBacklogs(3).build();
        assertThat(s).isEqualTo(new HttpSettings(1_048_576, Duration.ofSeconds(7), Duration.ofSeconds(1), 3, AccessKeys.OPEN));
        assertThat(HttpSettings.builder().maxBodyBytes(2048).metricsMaxAge(Duration.ZERO).build())
                .isEqualTo(new HttpSettings(2048, Duration.ofSeconds(5), Duration.ZERO, 10, AccessKeys.OPEN));
    }

    @Test
    void everyProblemIsReportedAtOnce() {
        assertThatThrownBy(() -> HttpSettings.builder().maxBodyBytes(1023).retryAfter(Duration.ofMillis(500))
                .metricsMaxAge(Duration.ofSeconds(-1)).topBacklogs(101).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("maxBodyBytes must be >= 1024, was 1023; retryAfter must be >= 1s, was PT0.5S; "
                        + "metricsMaxAge must not be negative, was PT-1S; topBacklogs must be 1-100, was 101");
    }
}
