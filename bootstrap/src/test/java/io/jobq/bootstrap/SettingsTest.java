package io.jobq.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.jobq.bootstrap.Settings.InvalidSettingsException;
import io.jobq.bootstrap.Settings.Key;
import io.jobq.application.worker.WorkerSettings;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
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
        assertThat(s.taskTimeouts().perTask()).isEmpty();
        assertThat(s.taskTimeouts().fallback()).hasValue(Duration.ofMinutes(15));
        assertThat(Key.JOBQ_TASK_TIMEOUT.defaultValue()).isEqualTo("default=15m");
        assertThat(s.selfVacuum()).isTrue();
    }

    @Test
    void selfVacuumCanBeSwitchedOff() {
        assertThat(Settings.resolve(Map.of("JOBQ_SELF_VACUUM", "false"), Map.of()).selfVacuum()).isFalse();
        assertThat(Settings.resolve(Map.of(), Map.of(Key.JOBQ_SELF_VACUUM, "false")).selfVacuum()).isFalse();
    }

    @Test
    void taskTimeoutsNameTasksAndADefaultWhichOtherwiseStaysFifteenMinutes() {
        Settings s = Settings.resolve(Map.of("JOBQ_TASK_TIMEOUT", "sleep=5s, report=2h ,default=90s"), Map.of());
        assertThat(s.taskTimeouts().perTask())
                .containsExactly(Map.entry(TaskName.of("sleep"), Duration.ofSeconds(5)),
                        Map.entry(TaskName.of("report"), Duration.ofHours(2)));
        assertThat(s.taskTimeouts().fallback()).hasValue(Duration.ofSeconds(90));
        assertThat(s.taskTimeouts()).hasToString("sleep=5s,report=2h,default=90s");

        assertThat(Settings.resolve(Map.of(), Map.of(Key.JOBQ_TASK_TIMEOUT, "sleep=500ms")).taskTimeouts().fallback())
                .hasValue(Duration.ofMinutes(15));
        assertThat(Settings.resolve(Map.of(), Map.of(Key.JOBQ_TASK_TIMEOUT, "default=none")).taskTimeouts().fallback())
                .isEmpty();
    }

    @Test
    void taskTimeoutsReachTheWorkerSettings() {
        TaskTimeouts t = Settings.resolve(Map.of("JOBQ_TASK_TIMEOUT", "sleep=5s,default=1m"), Map.of()).taskTimeouts();
        WorkerSettings ws = t.applyTo(WorkerSettings.builder()).build();
        assertThat(ws.timeoutFor(TaskName.of("sleep"))).hasValue(Duration.ofSeconds(5));
        assertThat(ws.timeoutFor(TaskName.of("noop"))).hasValue(Duration.ofMinutes(1));
        assertThat(TaskTimeouts.parse("default=none").applyTo(WorkerSettings.builder()).build().timeoutFor(TaskName.of("noop")))
                .isEmpty();
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            sleep                 | entry "sleep": expected task=duration or default=duration
            sleep=fast            | entry "sleep=fast": expected a duration like 30s
            sleep=0s              | entry "sleep=0s": the timeout must be positive
            sleep=-5s             | entry "sleep=-5s": expected a duration like 30s
            default=0             | entry "default=0": the timeout must be positive
            sleep=none            | entry "sleep=none": none is accepted for default only
            bad task=5s           | entry "bad task=5s": task must be
            =5s                   | entry "=5s": task must be
            sleep=1s,sleep=2s     | entry "sleep=2s": task sleep is given twice
            default=1m,default=2m | entry "default=2m": default is given twice
            """)
    void aBadTaskTimeoutEntryIsNamedWithTheFlagAndWhatWasExpected(String value, String message) {
        assertThatThrownBy(() -> Settings.resolve(Map.of(), Map.of(Key.JOBQ_TASK_TIMEOUT, value)))
                .isInstanceOf(InvalidSettingsException.class)
                .hasMessageStartingWith("invalid --task-timeout=\"" + value + "\": " + message);
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
        assertThat(List.of(Key.values())).hasSize(18);
    }
}
