package io.jobq.http;

import static io.jobq.http.ListenerDeathsLoseNoWakeupTest.NOOP;
import static io.jobq.http.ListenerDeathsLoseNoWakeupTest.SHORT;
import static io.jobq.http.ListenerDeathsLoseNoWakeupTest.enqueueToDoneMillis;
import static io.jobq.http.ListenerDeathsLoseNoWakeupTest.metric;
import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.jobq.application.fake.Await;
import io.jobq.application.worker.HandlerRegistry;
import io.jobq.application.worker.Worker;
import io.jobq.domain.job.JobId;
import io.jobq.postgres.PostgresJobStore;
import io.jobq.postgres.PostgresWakeupChannel;
import io.jobq.postgres.testing.PgBouncer;
import io.jobq.postgres.testing.PgBouncer.PoolMode;
import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.LoggerFactory;

/**
 * A worker whose listener goes through a real PgBouncer in transaction mode: LISTEN "succeeds", so
 * {@code jobq_listener_connected} is 1, but nothing is delivered. The worker says so in its log and in
 * {@code jobq_listener_delivering 0}, and its jobs still run through the fallback poll (1 s here).
 */
@ExtendWith(PostgresDatabaseExtension.class)
class ListenerBehindPoolerTest {

    @Test
    void theWorkerWarnsExportsDeliveringZeroAndPolls(TestDatabase db) {
        Logger channelLog = (Logger) LoggerFactory.getLogger(PostgresWakeupChannel.class);
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        channelLog.addAppender(logged);
        PostgresJobStore store = new PostgresJobStore(db.dataSource());
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        HttpApi api = HttpApi.create(store, registry, HttpSettings.DEFAULTS).start(0);
        ApiClient client = new ApiClient(api.port());
        try (PgBouncer bouncer = PgBouncer.start(db, PoolMode.TRANSACTION, 2)) {
            PostgresWakeupChannel channel = new PostgresWakeupChannel(bouncer.jdbcUrl(), db.dataSource(),
                    PostgresWakeupChannel.Options.DEFAULTS.withProbe(Duration.ofSeconds(2), Duration.ofMinutes(1)));
            Worker worker = Worker.builder(store, HandlerRegistry.withBuiltIns()).wakeups(channel)
                    .settings(SHORT.toBuilder().pollInterval(Duration.ofSeconds(1)).build())
                    .listener(WorkerMetrics.bind(registry, Optional.of(channel))).build();
            worker.start();
            try {
                Await.until(Duration.ofSeconds(10), "the pooler warning", () -> logged.list.stream()
                        .anyMatch(e -> e.getLevel() == Level.WARN && e.getFormattedMessage().contains("transaction-mode pooler")));
                assertThat(metric(client, "jobq_listener_connected")).as("LISTEN itself 'succeeded'").isEqualTo(1.0);
                assertThat(metric(client, "jobq_listener_delivering")).isEqualTo(0.0);
                assertThat(metric(client, "jobq_listener_failed_attempts")).isEqualTo(0.0);

                JobId id = store.enqueue(NOOP).job().id();
                assertThat(enqueueToDoneMillis(db, id)).as("enqueue → done through the 1 s poll, ms").isLessThan(5_000);
            } finally {
                worker.close();
            }
        } finally {
            api.stop();
            channelLog.detachAppender(logged);
        }
    }
}
