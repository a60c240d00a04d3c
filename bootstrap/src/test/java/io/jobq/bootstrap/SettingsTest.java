package io.jobq.bootstrap;

import static io.jobq.bootstrap.Settings.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.jobq.application.config.ConfigValue;
import io.jobq.application.worker.WorkerSettings;
import io.jobq.bootstrap.Settings.InvalidSettingsException;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.lease.WorkerId;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class SettingsTest {

    @Test
    void defaultsAreTheDocumentedOnes() {
        Settings s = Settings.defaults();
        assertThat(s.get(DATABASE_URL)).isEmpty();
        assertThat(s.get(PORT)).isEqualTo(8000);
        assertThat(s.get(POOL_SIZE)).isEqualTo(10);
        assertThat(s.get(LEASE)).isEqualTo(Duration.ofSeconds(30));
        assertThat(s.get(HEARTBEAT)).isEmpty();
        assertThat(Roles.workerSettings(s).effectiveHeartbeatInterval()).isEqualTo(Duration.ofSeconds(10));
        assertThat(s.get(POLL_INTERVAL)).isEqualTo(Duration.ofSeconds(1));
        assertThat(s.get(CLAIM_BATCH)).isEqualTo(100);
        assertThat(s.get(CONCURRENCY)).isEqualTo(4);
        assertThat(s.get(QUEUES)).containsExactly(QueueName.DEFAULT);
        assertThat(s.get(GRACE_PERIOD)).isEqualTo(Duration.ofSeconds(30));
        assertThat(s.get(MAINTENANCE_INTERVAL)).isEqualTo(Duration.ofSeconds(1));
        assertThat(s.get(LISTEN)).isTrue();
        assertThat(s.get(MAX_REQUEST_BYTES)).isEqualTo(1_048_576);
        assertThat(s.get(LOG_LEVEL)).isEqualTo("INFO");
        assertThat(s.get(WORKER_ID)).isEmpty();
        assertThat(s.get(METRICS_PORT)).isEmpty();
        assertThat(s.get(TASK_TIMEOUT).perTask()).isEmpty();
        assertThat(s.get(TASK_TIMEOUT).fallback()).hasValue(Duration.ofMinutes(15));
        assertThat(TASK_TIMEOUT.defaultText()).isEqualTo("default=15m");
        assertThat(s.get(SELF_VACUUM)).isTrue();
    }

    @Test
    void theLaunchersDefaultsGiveTheWorkerExactlyItsOwnDefaults() {
        assertThat(Roles.workerSettings(Settings.defaults())).isEqualTo(WorkerSettings.DEFAULTS);
    }

    @Test
    void everyVariableAndFlagReachesTheWorkerSettings() {
        WorkerSettings ws = Roles.workerSettings(Settings.resolve(Map.ofEntries(
                Map.entry("JOBQ_QUEUES", "a,b"), Map.entry("JOBQ_CONCURRENCY", "7"), Map.entry("JOBQ_CLAIM_BATCH", "3"),
                Map.entry("JOBQ_PREFETCH", "20"),                Map.entry("JOBQ_LEASE", "9s"), Map.entry("JOBQ_HEARTBEAT", "2s"), Map.entry("JOBQ_POLL_INTERVAL", "300ms"),
                Map.entry("JOBQ_LISTEN", "false"), Map.entry("JOBQ_MAINTENANCE_INTERVAL", "700ms"),
                Map.entry("JOBQ_GRACE_PERIOD", "4s"), Map.entry("JOBQ_WORKER_ID", "w1"),
                Map.entry("JOBQ_TASK_TIMEOUT", "sleep=6s,default=none")), Map.of()));
        assertThat(ws).isEqualTo(WorkerSettings.builder().queues(QueueName.of("a"), QueueName.of("b")).concurrency(7)
                .claimBatchSize(3).prefetch(20).lease(Duration.ofSeconds(9)).heartbeatInterval(Duration.ofSeconds(2))
                .pollInterval(Duration.ofMillis(300)).listen(false).maintenanceInterval(Duration.ofMillis(700))
                .gracePeriod(Duration.ofSeconds(4)).workerId(WorkerId.of("w1"))
                .taskTimeout(TaskName.of("sleep"), Duration.ofSeconds(6)).defaultTaskTimeout(Optional.empty()).build());
    }

    @Test
    void selfVacuumCanBeSwitchedOff() {
        assertThat(Settings.resolve(Map.of("JOBQ_SELF_VACUUM", "false"), Map.of()).get(SELF_VACUUM)).isFalse();
        assertThat(Settings.resolve(Map.of(), Map.of(SELF_VACUUM, "false")).get(SELF_VACUUM)).isFalse();
    }

    @Test
    void taskTimeoutsNameTasksAndADefaultWhichOtherwiseStaysFifteenMinutes() {
        TaskTimeouts t = Settings.resolve(Map.of("JOBQ_TASK_TIMEOUT", "sleep=5s, report=2h ,default=90s"), Map.of())
                .get(TASK_TIMEOUT);
        assertThat(t.perTask())
                .containsExactly(Map.entry(TaskName.of("sleep"), Duration.ofSeconds(5)),
                        Map.entry(TaskName.of("report"), Duration.ofHours(2)));
        assertThat(t.fallback()).hasValue(Duration.ofSeconds(90));
        assertThat(t).hasToString("sleep=5s,report=2h,default=90s");

        assertThat(Settings.resolve(Map.of(), Map.of(TASK_TIMEOUT, "sleep=500ms")).get(TASK_TIMEOUT).fallback())
                .hasValue(Duration.ofMinutes(15));
        assertThat(Settings.resolve(Map.of(), Map.of(TASK_TIMEOUT, "default=none")).get(TASK_TIMEOUT).fallback())
                .isEmpty();
    }

    @Test
    void taskTimeoutsReachTheWorkerSettings() {
        TaskTimeouts t = Settings.resolve(Map.of("JOBQ_TASK_TIMEOUT", "sleep=5s,default=1m"), Map.of()).get(TASK_TIMEOUT);
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
        assertThatThrownBy(() -> Settings.resolve(Map.of(), Map.of(TASK_TIMEOUT, value)))
                .isInstanceOf(InvalidSettingsException.class)
                .hasMessageStartingWith("invalid --task-timeout=\"" + value + "\": " + message);
    }

    @Test
    void flagsOverrideTheEnvironment() {
        Settings s = Settings.resolve(Map.of("PORT", "9000", "JOBQ_LEASE", "2m", "JOBQ_QUEUES", "a, b,a"),
                Map.of(PORT, "9100"));
        assertThat(s.get(PORT)).isEqualTo(9100);
        assertThat(s.get(LEASE)).isEqualTo(Duration.ofMinutes(2));
        assertThat(s.get(QUEUES)).containsExactly(QueueName.of("a"), QueueName.of("b"));
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
            JOBQ_PREFETCH          | -1        | invalid JOBQ_PREFETCH="-1": must be from 0 to 1000
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
        assertThatThrownBy(() -> Settings.resolve(Map.of("JOBQ_CONCURRENCY", "many"), Map.of(PORT, "-1")))
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
}
