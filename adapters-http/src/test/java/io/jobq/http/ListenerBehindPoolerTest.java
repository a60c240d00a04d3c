package io.jobq.http;

import static io.jobq.http.ListeningWorker.SHORT;
import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import io.jobq.application.fake.Await;
import io.jobq.domain.job.JobId;
import io.jobq.postgres.PostgresWakeupChannel;
import io.jobq.postgres.testing.PgBouncer;
import io.jobq.postgres.testing.PgBouncer.PoolMode;
import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A worker whose listener goes through a real PgBouncer in transaction mode: LISTEN "succeeds", so
 * {@code jobq_listener_connected} is 1, but nothing is delivered. The worker says so in its log and in
 * {@code jobq_listener_delivering 0}, and its jobs still run through the fallback poll (1 s here).
 */
@ExtendWith(PostgresDatabaseExtension.class)
class ListenerBehindPoolerTest {

    @Test
    void theWorkerWarnsExportsDeliveringZeroAndPolls(TestDatabase db) {
        try (PgBouncer bouncer = PgBouncer.start(db, PoolMode.TRANSACTION, 2)) {
            PostgresWakeupChannel channel = new PostgresWakeupChannel(bouncer.jdbcUrl(), db.dataSource(),
                    PostgresWakeupChannel.Options.DEFAULTS.withProbe(Duration.ofSeconds(2), Duration.ofMinutes(1)));
            try (ListeningWorker w = ListeningWorker.start(db, channel, SHORT.toBuilder().pollInterval(Duration.ofSeconds(1)).build())) {
                Await.until(Duration.ofSeconds(10), "the pooler warning",
                        () -> w.channelLogged(Level.WARN, "transaction-mode pooler"));
                assertThat(w.metric("jobq_listener_connected")).as("LISTEN itself 'succeeded'").isEqualTo(1.0);
                assertThat(w.metric("jobq_listener_delivering")).isEqualTo(0.0);
                assertThat(w.metric("jobq_listener_failed_attempts")).isEqualTo(0.0);

                JobId id = w.enqueueNoop();
                assertThat(w.enqueueToDoneMillis(id)).as("enqueue → done through the 1 s poll, ms").isLessThan(5_000);
            }
        }
    }
}
