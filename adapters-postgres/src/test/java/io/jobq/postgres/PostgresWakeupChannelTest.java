package io.jobq.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.application.fake.Await;
import io.jobq.domain.job.QueueName;
import io.jobq.postgres.testing.JdbcProxies;
import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * LISTEN on a real server: wake-ups arrive and are proven to (delivering), and the listener survives its
 * backend being killed and any Throwable from its callback or its connection.
 */
@ExtendWith(PostgresDatabaseExtension.class)
class PostgresWakeupChannelTest {

    TestDatabase db;
    PostgresWakeupChannel channel;
    final Semaphore wakeups = new Semaphore(0);

    @BeforeEach
    void setUp(TestDatabase db) {
        this.db = db;
        channel = new PostgresWakeupChannel(db.jdbcUrl(), db.dataSource());
        channel.start(Set.of(QueueName.DEFAULT), wakeups::release);
    }

    @AfterEach
    void tearDown() {
        channel.close();
    }

    @Test
    void connectsAndCatchesUpOnceThenWakesOnEachEnqueue() throws InterruptedException {
        assertThat(wakeups.tryAcquire(5, TimeUnit.SECONDS)).as("catch-up call after the first LISTEN").isTrue();
        assertThat(channel.isConnected()).isTrue();
        await(channel::isDelivering);
        new PostgresJobStore(db.dataSource()).enqueue(StoreFixtures.job("t"));
        assertThat(wakeups.tryAcquire(10, TimeUnit.SECONDS)).as("woken by the enqueue's NOTIFY").isTrue();
        channel.wake(QueueName.DEFAULT);
        assertThat(wakeups.tryAcquire(10, TimeUnit.SECONDS)).as("woken by wake()").isTrue();
    }

    @Test
    void ignoresOtherQueues() throws InterruptedException {
        assertThat(wakeups.tryAcquire(5, TimeUnit.SECONDS)).isTrue();
        channel.wake(QueueName.of("elsewhere"));
        assertThat(wakeups.tryAcquire(500, TimeUnit.MILLISECONDS)).isFalse();
    }

    @Test
    void reconnectsAfterItsBackendIsTerminatedAndStillWakes() throws InterruptedException {
        assertThat(wakeups.tryAcquire(5, TimeUnit.SECONDS)).isTrue();
        for (int round = 1; round <= 3; round++) {
            // A closed channel's backend (the previous test's, or the one killed last round) leaves
            // pg_stat_activity a moment after its connection closes: wait until ours is the only listener.
            await(() -> db.dsl().resultQuery("""
                    SELECT count(*) FROM pg_stat_activity
                    WHERE datname = current_database() AND query LIKE 'LISTEN%' AND pid <> pg_backend_pid()""")
                    .fetchSingle(0, Integer.class) == 1);
            int killed = db.dsl().resultQuery("""
                    SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                    WHERE datname = current_database() AND query LIKE 'LISTEN%' AND pid <> pg_backend_pid()) k""")
                    .fetchSingle(0, Integer.class);
            assertThat(killed).as("the listener's backend was found and terminated").isEqualTo(1);
            assertThat(wakeups.tryAcquire(5, TimeUnit.SECONDS)).as("catch-up call after reconnect " + round).isTrue();
            long expected = round;
            await(() -> channel.reconnects() == expected && channel.isConnected());
            new PostgresJobStore(db.dataSource()).enqueue(StoreFixtures.job("t"));
            assertThat(wakeups.tryAcquire(10, TimeUnit.SECONDS)).as("woken after reconnect " + round).isTrue();
        }
    }

    @Test
    void anUnreachableServerLeavesItDisconnectedAndCounting() throws InterruptedException {
        try (var broken = new PostgresWakeupChannel("jdbc:postgresql://127.0.0.1:1/none?connectTimeout=1", db.dataSource(),
                new PostgresWakeupChannel.Options(Duration.ofMillis(50), Duration.ofSeconds(1), Duration.ofMillis(200)))) {
            broken.start(Set.of(QueueName.DEFAULT), () -> {});
            await(() -> broken.failedAttempts() >= 2);
            assertThat(broken.isConnected()).isFalse();
        }
    }

    /** An Error that is not a VirtualMachineError: what the listener must survive, without tripping a JVM-wide policy. */
    static final class InjectedError extends Error {
        InjectedError(String where) {
            super("injected into " + where);
        }
    }

    @Test
    void anErrorFromTheCallbackIsLoggedAndTheConnectionKept() throws InterruptedException {
        AtomicInteger calls = new AtomicInteger();
        Semaphore woken = new Semaphore(0);
        try (var c = new PostgresWakeupChannel(db.jdbcUrl(), db.dataSource())) {
            c.start(Set.of(QueueName.DEFAULT), () -> {
                woken.release();
                if (calls.incrementAndGet() == 1) throw new InjectedError("the callback");
            });
            assertThat(woken.tryAcquire(5, TimeUnit.SECONDS)).as("the catch-up call, which throws").isTrue();
            await(c::isDelivering);
            c.wake(QueueName.DEFAULT);
            assertThat(woken.tryAcquire(10, TimeUnit.SECONDS)).as("woken again after the Error").isTrue();
            assertThat(c.reconnects()).as("the connection was kept").isZero();
        }
    }

    @Test
    void anErrorFromTheConnectionIsFollowedByAReconnect() throws InterruptedException {
        AtomicInteger opened = new AtomicInteger();
        PostgresWakeupChannel.Opener failing = url -> switch (opened.incrementAndGet()) {
            case 1 -> throw new InjectedError("opening the connection");
            // LISTEN succeeds on the real connection, then receiving throws.
            case 2 -> JdbcProxies.afterEachCall(Connection.class, DriverManager.getConnection(url), (method, args, result) -> {
                if (method.getName().equals("unwrap")) throw new InjectedError("the connection");
                return result;
            });
            default -> DriverManager.getConnection(url);
        };
        Semaphore woken = new Semaphore(0);
        try (var c = new PostgresWakeupChannel(db.jdbcUrl(), db.dataSource(), PostgresWakeupChannel.Options.DEFAULTS, failing)) {
            c.start(Set.of(QueueName.DEFAULT), woken::release);
            await(() -> opened.get() >= 3 && c.isDelivering());
            woken.drainPermits();
            c.wake(QueueName.DEFAULT);
            assertThat(woken.tryAcquire(10, TimeUnit.SECONDS)).as("woken after two Errors").isTrue();
            assertThat(c.reconnects()).as("the second connection counted, then replaced").isEqualTo(1);
        }
    }

    @Test
    void aFatalErrorGoesToTheJvmsDefaultHandlerWhichTheLauncherMakesHalt() throws InterruptedException {
        List<Throwable> escalated = new CopyOnWriteArrayList<>();
        Thread.UncaughtExceptionHandler previous = Thread.getDefaultUncaughtExceptionHandler();
        Thread.setDefaultUncaughtExceptionHandler((thread, e) -> escalated.add(e));
        AtomicInteger calls = new AtomicInteger();
        Semaphore woken = new Semaphore(0);
        try (var c = new PostgresWakeupChannel(db.jdbcUrl(), db.dataSource())) {
            // Constructed, not provoked: the handler only has to see it, and the test JVM keeps its heap.
            OutOfMemoryError oom = new OutOfMemoryError("injected into the callback");
            c.start(Set.of(QueueName.DEFAULT), () -> {
                woken.release();
                if (calls.incrementAndGet() == 1) throw oom;
            });
            assertThat(woken.tryAcquire(5, TimeUnit.SECONDS)).as("the catch-up call, which throws").isTrue();
            await(() -> !escalated.isEmpty());
            assertThat(escalated).containsExactly(oom);
            // Without a halting handler (an embedding application), the listener carries on.
            await(c::isDelivering);
            c.wake(QueueName.DEFAULT);
            assertThat(woken.tryAcquire(10, TimeUnit.SECONDS)).as("woken again").isTrue();
        } finally {
            Thread.setDefaultUncaughtExceptionHandler(previous);
        }
    }

    private static void await(BooleanSupplier condition) {
        Await.until(Duration.ofSeconds(10), "the channel's condition", condition);
    }
}
