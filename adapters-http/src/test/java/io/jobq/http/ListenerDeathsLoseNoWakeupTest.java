package io.jobq.http;

import static io.jobq.http.ListeningWorker.NOOP;
import static io.jobq.http.ListeningWorker.SHORT;
import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import io.jobq.application.fake.Await;
import io.jobq.application.port.EnqueueResult;
import io.jobq.application.port.JobStore;
import io.jobq.domain.job.JobId;
import io.jobq.postgres.PostgresWakeupChannel;
import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Robustness case R03: the listener dies and comes back. Short settings (lease 2 s, heartbeat lease/3, maintenance
 * 0.5 s, fallback poll 30 s, so only the wake-up path can start a job within 2 s), one idle worker,
 * its listener state in {@code /metrics} through {@link WorkerMetrics}.
 */
@ExtendWith(PostgresDatabaseExtension.class)
class ListenerDeathsLoseNoWakeupTest {

    /** Terminates the LISTEN session(s) of this database; returns how many. */
    static int terminateListener(TestDatabase db) {
        return db.dsl().resultQuery("""
                SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                WHERE datname = current_database() AND query LIKE 'LISTEN%' AND pid <> pg_backend_pid()) k""")
                .fetchSingle(0, Integer.class);
    }

    @Test
    void fiftyListenerDeathsLoseNoWakeupAndTheStateIsInMetrics(TestDatabase db) {
        db.execute("TRUNCATE jobs, tenants");
        PostgresWakeupChannel channel = new PostgresWakeupChannel(db.jdbcUrl(), db.dataSource());
        try (ListeningWorker w = ListeningWorker.start(db, channel, SHORT)) {
            JobStore store = w.api.store();
            Await.until(Duration.ofSeconds(10), "listener connected and delivering", channel::isDelivering);
            assertThat(w.metric("jobq_listener_connected")).isEqualTo(1.0);
            assertThat(w.metric("jobq_listener_delivering")).isEqualTo(1.0);
            assertThat(w.metric("jobq_listener_reconnects_total")).isEqualTo(0.0);

            // Baseline: claimed < 500 ms after enqueue.
            JobId first = store.enqueue(NOOP).job().id();
            Await.until(Duration.ofSeconds(10), "baseline job done", () -> store.get(first).orElseThrow().finishedAt().isPresent());
            double claimMs = db.dsl().resultQuery("SELECT extract(epoch FROM started_at - created_at) * 1000 FROM jobs WHERE id = {0}",
                    first.value()).fetchSingle(0, Double.class);
            assertThat(claimMs).as("baseline enqueue → claim, ms").isLessThan(500);

            long worst = 0;
            for (int round = 1; round <= 50; round++) {
                // The previous job is done, so the listener has re-established LISTEN (or was never gone); still,
                // it may be between "connected" and its first LISTEN statement showing in pg_stat_activity.
                int[] killed = {0};
                Await.until(Duration.ofSeconds(10), "a LISTEN session to terminate in round " + round,
                        () -> (killed[0] = terminateListener(db)) > 0);
                assertThat(killed[0]).as("LISTEN sessions terminated in round " + round).isEqualTo(1);
                sleepMillis(ThreadLocalRandom.current().nextInt(0, 301)); // prescribed by the case
                EnqueueResult r = store.enqueue(NOOP);
                long ms = w.enqueueToDoneMillis(r.job().id());
                assertThat(ms).as("round %d: enqueue → done, ms", round).isLessThan(2_000);
                worst = Math.max(worst, ms);
            }
            System.out.printf("R03: 50 listener deaths, worst enqueue→done %d ms%n", worst);

            assertThat(db.dsl().resultQuery("SELECT count(*) FROM jobs WHERE state = 'done'").fetchSingle(0, Long.class)).isEqualTo(51);
            Await.until(Duration.ofSeconds(10), "50 reconnects counted, delivery proven after the last",
                    () -> channel.reconnects() == 50 && channel.isDelivering());
            assertThat(w.metric("jobq_listener_reconnects_total")).isEqualTo(50.0);
            assertThat(w.metric("jobq_listener_connected")).isEqualTo(1.0);
            assertThat(w.metric("jobq_listener_delivering")).isEqualTo(1.0);
            assertThat(w.metric("jobq_listener_failed_attempts")).isEqualTo(0.0);
            assertThat(w.metric("jobq_maintenance_errors_total")).isEqualTo(0.0);
        }
    }

    /**
     * A worker whose LISTEN cannot be established (here: a dead port; in production typically a
     * transaction-mode pooler) says so in its log (ERROR) and in /metrics (connected 0, failed attempts
     * growing), and its jobs still run through the fallback poll (1 s here, to keep the test short).
     */
    @Test
    void aListenerThatCannotConnectIsLoudAndTheWorkerPolls(TestDatabase db) {
        PostgresWakeupChannel dead = new PostgresWakeupChannel("jdbc:postgresql://127.0.0.1:1/none?connectTimeout=1",
                db.dataSource(), new PostgresWakeupChannel.Options(Duration.ofMillis(250), Duration.ofSeconds(5), Duration.ofMillis(500)));
        try (ListeningWorker w = ListeningWorker.start(db, dead, SHORT.toBuilder().pollInterval(Duration.ofSeconds(1)).build())) {
            Await.until(Duration.ofSeconds(20), "the channel gave up loudly (ERROR after 5 failures)",
                    () -> w.channelLogged(Level.ERROR, "LISTEN could not be established", "polling"));
            assertThat(w.metric("jobq_listener_connected")).isEqualTo(0.0);
            assertThat(w.metric("jobq_listener_delivering")).isEqualTo(0.0);
            assertThat(w.metric("jobq_listener_failed_attempts")).isGreaterThanOrEqualTo(5.0);
            assertThat(w.metric("jobq_listener_reconnects_total")).isEqualTo(0.0);

            long ms = w.enqueueToDoneMillis(w.enqueueNoop());
            assertThat(ms).as("enqueue → done through the 1 s poll, ms").isLessThan(5_000);
        }
    }

    private static void sleepMillis(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
