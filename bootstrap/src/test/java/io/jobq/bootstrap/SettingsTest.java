package io.jobq.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.jobq.bootstrap.Settings.InvalidSettingsException;
import io.jobq.bootstrap.Settings.Key;
import io.jobq.domain.job.QueueName;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class SettingsTest {

    @Test
    void defaultsAreTheDocumentedOnes() {
        Settings s = Settings.defaults();
        assertThat(s.database()).isEmpty();
        assertThat(s.port()).isEqualTo(8000);
        assertThat(s.poolSize()).isEqualTo(10);
        assertThat(s.lease()).isEqualTo(Duration.ofSeconds(30));
        assertThat(s.effectiveHeartbeat()).isEqualTo(Duration.ofSeconds(10));
        assertThat(s.pollInterval()).isEqualTo(Duration.ofSeconds(1));
        assertThat(s.claimBatch()).isEqualTo(10);
        assertThat(s.concurrency()).isEqualTo(4);
        assertThat(s.queues()).containsExactly(QueueName.DEFAULT);
        assertThat(s.gracePeriod()).isEqualTo(Duration.ofSeconds(30));
        assertThat(s.listen()).isTrue();
        assertThat(s.maxRequestBytes()).isEqualTo(1_048_576);
        assertThat(s.logLevel()).isEqualTo("INFO");
        assertThat(s.metricsPort()).isEmpty();
        assertThat(s.selfVacuum()).isTrue();
    }

    @Test
    void selfVacuumCanBeSwitchedOff() {
        assertThat(Settings.resolve(Map.of("JOBQ_SELF_VACUUM", "false"), Map.of()).selfVacuum()).isFalse();
        assertThat(Settings.resolve(Map.of(), Map.of(Key.JOBQ_SELF_VACUUM, "false")).selfVacuum()).isFalse();
    }

    @Test
    void flagsOverrideTheEnvironment() {
        Settings s = Settings.resolve(Map.of("PORT", "9000", "JOBQ_LEASE", "2m", "JOBQ_QUEUES", "a, b,a"),
                Map.of(Key.PORT, "9100"));
        assertThat(s.port()).isEqualTo(9100);
        assertThat(s.lease()).isEqualTo(Duration.ofMinutes(2));
        assertThat(s.queues()).containsExactly(QueueName.of("a"), QueueName.of("b"));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            500ms | 500
            30s   | 30000
            30    | 30000
            1.5s  | 1500
            2m    | 120000
            1h    | 3600000
            PT45S | 45000
            """)
    void durationsAcceptCommonForms(String text, long millis) {
        assertThat(ConfigValue.duration(text)).isEqualTo(Duration.ofMillis(millis));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            PORT                   | abc       | invalid PORT="abc": expected an integer from 0 to 65535
            PORT                   | 70000     | invalid PORT="70000": must be from 0 to 65535
            JOBQ_LEASE             | soon      | invalid JOBQ_LEASE="soon": expected a duration
            JOBQ_LEASE             | 10ms      | invalid JOBQ_LEASE="10ms": must be at least 100 ms
            JOBQ_CLAIM_BATCH       | 0         | invalid JOBQ_CLAIM_BATCH="0": must be from 1 to 1000
            JOBQ_QUEUES            | bad queue | invalid JOBQ_QUEUES="bad queue": queue must be
            JOBQ_LISTEN            | maybe     | invalid JOBQ_LISTEN="maybe": expected true or false
            JOBQ_SELF_VACUUM       | sometimes | invalid JOBQ_SELF_VACUUM="sometimes": expected true or false
            JOBQ_LOG_LEVEL         | LOUD      | invalid JOBQ_LOG_LEVEL="LOUD": expected TRACE
            DATABASE_URL           | mysql://x | invalid DATABASE_URL=<hidden>: must start with
            """)
    void anInvalidVariableIsNamedWithWhatWasExpected(String variable, String value, String message) {
        assertThatThrownBy(() -> Settings.resolve(Map.of(variable, value), Map.of()))
                .isInstanceOf(InvalidSettingsException.class)
                .hasMessageStartingWith(message);
    }

    @Test
    void anInvalidFlagIsNamedAsTheFlagAndEveryProblemIsReportedAtOnce() {
        assertThatThrownBy(() -> Settings.resolve(Map.of("JOBQ_CONCURRENCY", "many"), Map.of(Key.PORT, "-1")))
                .hasMessageContaining("invalid --port=\"-1\"")
                .hasMessageContaining("invalid JOBQ_CONCURRENCY=\"many\"")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
    }

    @Test
    void aHeartbeatNotShorterThanTheLeaseIsRefused() {
        assertThatThrownBy(() -> Settings.resolve(Map.of("JOBQ_LEASE", "5s", "JOBQ_HEARTBEAT", "5s"), Map.of()))
                .hasMessageContaining("JOBQ_HEARTBEAT must be shorter than the lease");
    }

    @Test
    void theDatabasePasswordIsNeverEchoed() {
        assertThatThrownBy(() -> Settings.resolve(Map.of("DATABASE_URL", "postgres://u:s3cret@"), Map.of()))
                .hasMessageNotContaining("s3cret");
    }

    @Test
    void everyKeyHasAFlagAndADescription() {
        for (Key k : Key.values()) {
            assertThat(k.flag()).startsWith("--");
            assertThat(k.description()).isNotBlank();
        }
        assertThat(List.of(Key.values())).hasSize(17);
    }
}
