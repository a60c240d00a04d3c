package io.jobq.postgres;

import static io.jobq.application.port.Throwables.rootMessage;
import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.zaxxer.hikari.HikariDataSource;
import io.jobq.application.fake.Await;
import io.jobq.application.port.NewJob;
import io.jobq.application.worker.HandlerRegistry;
import io.jobq.application.worker.Worker;
import io.jobq.application.worker.WorkerListener;
import io.jobq.application.worker.WorkerSettings;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.tenant.TenantId;
import io.jobq.postgres.testing.PgBouncer;
import io.jobq.postgres.testing.PgBouncer.PoolMode;
import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.LoggerFactory;

/**
 * jobq behind a real PgBouncer in transaction mode (robustness issue 11, item 4): the listener finds
 * out that nothing is delivered and says so, and the store works with {@code prepareThreshold=0}.
 */
@ExtendWith(PostgresDatabaseExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TransactionPoolerTest {
    static final Duration PROBE_TIMEOUT = Duration.ofSeconds(2);
    static final PostgresWakeupChannel.Options OPTIONS = PostgresWakeupChannel.Options.DEFAULTS
            .withProbe(PROBE_TIMEOUT, Duration.ofMinutes(1));

    TestDatabase db;
    PgBouncer bouncer;
    final ListAppender<ILoggingEvent> logged = new ListAppender<>();
    final Logger channelLog = (Logger) LoggerFactory.getLogger(PostgresWakeupChannel.class);

    @BeforeAll
    void startBouncer(TestDatabase db) {
        this.db = db;
        bouncer = PgBouncer.start(db, PoolMode.TRANSACTION, 2);
    }

    @AfterAll
    void stopBouncer() {
        bouncer.close();
    }

    @BeforeEach
    void captureLog() {
        logged.list.clear();
        logged.start();
        channelLog.addAppender(logged);
    }

    @AfterEach
    void releaseLog() {
        channelLog.detachAppender(logged);
    }

    /** What the channel logged so far: its thread appends while a test reads, so copied under the appender's lock. */
    List<ILoggingEvent> loggedSoFar() {
        synchronized (logged) {
            return List.copyOf(logged.list);
        }
    }

    List<ILoggingEvent> poolerWarnings() {
        return loggedSoFar().stream().filter(e -> e.getLevel() == Level.WARN
                && e.getFormattedMessage().contains("did not come back") && e.getFormattedMessage().contains("PgBouncer")).toList();
    }

    @Nested
    class TheListener {

        @Test
        void behindTheTransactionPoolerIsConnectedButNotDeliveringAndWarnsNamingPoolers() {
            try (var channel = new PostgresWakeupChannel(bouncer.jdbcUrl(), db.dataSource(), OPTIONS)) {
                channel.start(Set.of(QueueName.DEFAULT), () -> {});
                Await.until(PROBE_TIMEOUT.plusSeconds(5), "the pooler warning", () -> !poolerWarnings().isEmpty());
                assertThat(channel.isConnected()).as("LISTEN itself 'succeeded'").isTrue();
                assertThat(channel.isDelivering()).isFalse();
                String warning = poolerWarnings().getFirst().getFormattedMessage();
                assertThat(warning).contains("transaction-mode pooler", "PgBouncer", "RDS Proxy", "pgcat",
                        "directly to PostgreSQL", "session-mode pool", "polls", "jobq_listener_delivering is 0");
                System.out.println("TransactionPoolerTest: " + warning);
            }
        }

        @Test
        void connectedDirectlyProvesDeliveryWithinTheProbeTime() {
            try (var channel = new PostgresWakeupChannel(db.jdbcUrl(), db.dataSource(), OPTIONS)) {
                channel.start(Set.of(QueueName.DEFAULT), () -> {});
                Await.until(PROBE_TIMEOUT, "delivery proven", channel::isDelivering);
                assertThat(poolerWarnings()).isEmpty();
            }
        }

        @Test
        void warnsOncePerConnectionWhileReprobingAndRecoversWhenTheSetupIsFixed() throws SQLException {
            PostgresWakeupChannel.Options often = OPTIONS.withProbe(Duration.ofMillis(500), Duration.ofMillis(500));
            try (var channel = new PostgresWakeupChannel(bouncer.jdbcUrl(), db.dataSource(), often);
                 Connection watcher = db.newConnection()) {
                try (Statement st = watcher.createStatement()) {
                    st.execute("LISTEN " + channel.probeChannel());
                }
                channel.start(Set.of(QueueName.DEFAULT), () -> {});
                // Probes keep going out (seen by a direct session) while only one warning is logged.
                List<String> tokens = new CopyOnWriteArrayList<>();
                Await.until(Duration.ofSeconds(15), "three probes sent", () -> {
                    for (PGNotification n : notifications(watcher)) tokens.add(n.getParameter());
                    return tokens.size() >= 3;
                });
                assertThat(tokens).doesNotHaveDuplicates();
                Await.until(Duration.ofSeconds(5), "the probe judged", () -> !poolerWarnings().isEmpty());
                assertThat(poolerWarnings()).hasSize(1);
                assertThat(channel.isDelivering()).isFalse();

                // The operator fixes the setup: the pool now hands out whole sessions. Clients reconnect.
                bouncer.restart(PoolMode.SESSION);
                Await.until(Duration.ofSeconds(15), "delivering again after the reconnect", channel::isDelivering);
                assertThat(channel.reconnects()).isGreaterThanOrEqualTo(1);
                assertThat(loggedSoFar()).as("the all-clear after the warning").anyMatch(e -> e.getLevel() == Level.INFO
                        && e.getFormattedMessage().contains("wake-ups are delivered"));
                assertThat(poolerWarnings()).hasSize(1);
            } finally {
                bouncer.restart(PoolMode.TRANSACTION);
            }
        }

        @Test
        void aProbeThatCannotBeSentIsNotBlamedOnAPooler() {
            HikariDataSource closed = PostgresPool.create(db.jdbcUrl(), 1, "closed", Duration.ofMillis(250));
            closed.close();
            try (var channel = new PostgresWakeupChannel(db.jdbcUrl(), closed, OPTIONS)) {
                channel.start(Set.of(QueueName.DEFAULT), () -> {});
                Await.until(Duration.ofSeconds(10), "the send failure logged", () -> loggedSoFar().stream()
                        .anyMatch(e -> e.getFormattedMessage().contains("could not send its test notification")));
                assertThat(channel.isConnected()).isTrue();
                assertThat(channel.isDelivering()).isFalse();
                assertThat(poolerWarnings()).isEmpty();
            }
        }

        private static PGNotification[] notifications(Connection c) {
            try {
                PGNotification[] n = c.unwrap(PGConnection.class).getNotifications(100);
                return n == null ? new PGNotification[0] : n;
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    /**
     * The worker's store through the pooler. pgjdbc names a statement on the server ({@code S_1}, …) once
     * a connection has run it {@code prepareThreshold} times (default 5); through a transaction pooler
     * the next use may land on a server session that lacks it, or that has another client's
     * {@code S_1}. {@code prepareThreshold=0} keeps every statement unnamed, which a pooler can route.
     * Two server sessions, eight slots: the clients share sessions, as in production.
     */
    @Nested
    class TheStore {
        static final int JOBS = 100;

        @Test
        void failsOnServerPreparedStatementsWithTheDriverDefaults() {
            Errors errors = new Errors();
            QueueName queue = QueueName.of("defaults");
            try (HikariDataSource pool = PostgresPool.create(bouncer.jdbcUrl(), 8, "via-bouncer-defaults", Duration.ofSeconds(5));
                 Worker worker = worker(pool, queue, errors)) {
                enqueue(queue);
                worker.start();
                Await.until(Duration.ofSeconds(60), "a prepared-statement error from the store",
                        () -> errors.list.stream().anyMatch(TheStore::isPreparedStatementError));
                Throwable e = errors.list.stream().filter(TheStore::isPreparedStatementError).findFirst().orElseThrow();
                System.out.println("TransactionPoolerTest: with pgjdbc's defaults through PgBouncer: " + sqlState(e).orElseThrow()
                        + " " + rootMessage(e));
            }
        }

        @Test
        void runsEveryJobWithPrepareThresholdZero() {
            Errors errors = new Errors();
            QueueName queue = QueueName.of("threshold0");
            try (HikariDataSource pool = PostgresPool.create(bouncer.jdbcUrl("prepareThreshold=0"), 8, "via-bouncer-0",
                    Duration.ofSeconds(5));
                 Worker worker = worker(pool, queue, errors)) {
                enqueue(queue);
                worker.start();
                Await.until(Duration.ofSeconds(60), JOBS + " jobs done", () -> db.dsl().resultQuery(
                        "SELECT count(*) FROM jobs WHERE queue = {0} AND state = 'done'", queue.value())
                        .fetchSingle(0, Integer.class) == JOBS);
                assertThat(errors.list).as("store and maintenance errors").isEmpty();
            }
        }

        private Worker worker(HikariDataSource pool, QueueName queue, Errors errors) {
            WorkerSettings settings = WorkerSettings.builder().listen(false).queues(queue).concurrency(8)
                    .pollInterval(Duration.ofMillis(50)).maintenanceInterval(Duration.ofMillis(50))
                    .gracePeriod(Duration.ofSeconds(2)).build();
            return Worker.builder(new PostgresJobStore(pool), HandlerRegistry.withBuiltIns()).settings(settings)
                    .listener(errors).build();
        }

        private void enqueue(QueueName queue) {
            PostgresJobStore direct = new PostgresJobStore(db.dataSource());
            for (int i = 0; i < JOBS; i++) {
                direct.enqueue(NewJob.of(TenantId.of("t" + i % 4), queue, TaskName.of("sleep"), "{\"ms\": 10}"));
            }
        }

        /** 42P05 "prepared statement "S_1" already exists" or 26000 "prepared statement "S_1" does not exist". */
        static boolean isPreparedStatementError(Throwable e) {
            return sqlState(e).filter(s -> s.equals("42P05") || s.equals("26000")).isPresent();
        }

        static Optional<String> sqlState(Throwable e) {
            return Stream.iterate(e, t -> t != null, Throwable::getCause)
                    .filter(SQLException.class::isInstance).map(t -> ((SQLException) t).getSQLState()).findFirst();
        }
    }

    /** Every store and maintenance error the worker reports. */
    static final class Errors implements WorkerListener {
        final List<Throwable> list = new CopyOnWriteArrayList<>();

        @Override
        public void storeError(String operation, RuntimeException e) {
            list.add(e);
        }

        @Override
        public void maintenanceError(RuntimeException e) {
            list.add(e);
        }
    }
}
