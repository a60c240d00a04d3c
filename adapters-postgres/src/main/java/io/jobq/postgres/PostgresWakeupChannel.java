package io.jobq.postgres;

import io.jobq.application.port.StoreUnavailableException;
import io.jobq.application.port.WakeupChannel;
import io.jobq.domain.job.QueueName;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The receiving side of wake-ups on PostgreSQL: {@code LISTEN jobq_wakeup} on one dedicated connection
 * outside the pool (a pooled connection would be handed to others, and LISTEN lives in the session).
 *
 * <p>A background thread waits for notifications with a short timeout, so a dropped connection is
 * noticed within about {@code pollTimeout}, and runs a no-op query when the connection has been quiet
 * for {@code checkInterval}, which catches half-open TCP connections. When the connection is lost it
 * reconnects with exponential backoff (100 ms doubling to {@code maxBackoff}); after every successful
 * LISTEN — first connect and reconnects alike — it calls {@code onWakeup} once, because notifications
 * sent while it was away are lost. The LISTEN is established BEFORE that catch-up call, so a job
 * enqueued at any moment is either caught by the catch-up pass or notified afterwards.
 *
 * <p>LISTEN needs a real session: behind a transaction-mode pooler (PgBouncer) it cannot work. The
 * channel then logs a warning on every failed attempt, an error once after five in a row, reports
 * {@link #isConnected()} false, and the worker lives on its fallback poll.
 */
public final class PostgresWakeupChannel implements WakeupChannel {
    private static final Logger log = LoggerFactory.getLogger(PostgresWakeupChannel.class);

    /**
     * @param pollTimeout longest wait for a notification before checking for shutdown. Default: 250 ms.
     * @param checkInterval quiet time after which a no-op query checks the connection. Default: 5 s.
     * @param maxBackoff the longest pause between reconnect attempts. Default: 5 s.
     */
    public record Options(Duration pollTimeout, Duration checkInterval, Duration maxBackoff) {
        public static final Options DEFAULTS = new Options(Duration.ofMillis(250), Duration.ofSeconds(5), Duration.ofSeconds(5));

        public Options {
            Objects.requireNonNull(pollTimeout, "pollTimeout");
            Objects.requireNonNull(checkInterval, "checkInterval");
            Objects.requireNonNull(maxBackoff, "maxBackoff");
            if (pollTimeout.toMillis() < 1) throw new IllegalArgumentException("pollTimeout must be >= 1 ms, was " + pollTimeout);
            if (checkInterval.compareTo(pollTimeout) < 0) throw new IllegalArgumentException("checkInterval must be >= pollTimeout");
            if (maxBackoff.toMillis() < 100) throw new IllegalArgumentException("maxBackoff must be >= 100 ms, was " + maxBackoff);
        }
    }

    private final String listenUrl;
    private final DataSource pool;
    private final Options options;
    private final AtomicLong reconnects = new AtomicLong();
    private final AtomicLong failedAttempts = new AtomicLong();
    private volatile boolean connected;
    private volatile boolean running;
    private volatile Thread thread;
    private volatile Connection connection;

    /**
     * @param listenUrl JDBC URL (with credentials) for the dedicated LISTEN connection; must reach
     *     PostgreSQL directly, not through a transaction-mode pooler
     * @param pool the pool used by {@link #wake}
     */
    public PostgresWakeupChannel(String listenUrl, DataSource pool, Options options) {
        this.listenUrl = Objects.requireNonNull(listenUrl, "listenUrl");
        this.pool = Objects.requireNonNull(pool, "pool");
        this.options = Objects.requireNonNull(options, "options");
    }

    public PostgresWakeupChannel(String listenUrl, DataSource pool) {
        this(listenUrl, pool, Options.DEFAULTS);
    }

    @Override
    public synchronized void start(Set<QueueName> queues, Runnable onWakeup) {
        if (thread != null) throw new IllegalStateException("wake-up channel already started");
        Set<String> names = queues.stream().map(QueueName::value).collect(Collectors.toUnmodifiableSet());
        Objects.requireNonNull(onWakeup, "onWakeup");
        running = true;
        thread = Thread.ofPlatform().daemon().name("jobq-listener").start(() -> listenLoop(names, onWakeup));
    }

    private void listenLoop(Set<String> queues, Runnable onWakeup) {
        long backoffMs = 100;
        boolean everConnected = false;
        while (running) {
            try (Connection c = DriverManager.getConnection(listenUrl)) {
                connection = c;
                try (Statement st = c.createStatement()) {
                    st.execute("LISTEN " + Enqueuer.CHANNEL);
                }
                connected = true;
                failedAttempts.set(0);
                backoffMs = 100;
                if (everConnected) {
                    long n = reconnects.incrementAndGet();
                    log.info("wake-up listener reconnected (reconnect #{})", n);
                } else {
                    log.debug("wake-up listener connected");
                }
                everConnected = true;
                // Catch up on whatever was enqueued while we were not listening; LISTEN is already active.
                safeRun(onWakeup);
                receive(c, queues, onWakeup);
            } catch (SQLException | RuntimeException e) {
                if (!running) break;
                long failures = failedAttempts.incrementAndGet();
                if (connected) {
                    log.warn("wake-up listener lost its connection: {}; reconnecting", e.getMessage());
                } else if (failures == 5) {
                    log.error("LISTEN could not be established {} times in a row ({}). Is the worker behind a "
                            + "transaction-mode pooler? It needs a direct PostgreSQL session. Falling back to polling.",
                            failures, e.getMessage());
                } else {
                    log.warn("wake-up listener cannot LISTEN ({}); retrying in {} ms, polling meanwhile", e.getMessage(), backoffMs);
                }
            } finally {
                connected = false;
                connection = null;
            }
            if (!running) break;
            try {
                Thread.sleep(backoffMs);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            backoffMs = Math.min(backoffMs * 2, options.maxBackoff().toMillis());
        }
    }

    private void receive(Connection c, Set<String> queues, Runnable onWakeup) throws SQLException {
        PGConnection pg = c.unwrap(PGConnection.class);
        int timeout = (int) Math.min(Integer.MAX_VALUE, options.pollTimeout().toMillis());
        long quietSince = System.nanoTime();
        while (running) {
            PGNotification[] notifications = pg.getNotifications(timeout);
            if (notifications != null && notifications.length > 0) {
                quietSince = System.nanoTime();
                boolean ours = false;
                for (PGNotification n : notifications) ours |= queues.contains(n.getParameter());
                if (ours) safeRun(onWakeup);
            } else if (System.nanoTime() - quietSince > options.checkInterval().toNanos()) {
                try (Statement st = c.createStatement()) {
                    st.execute("SELECT 1");
                }
                quietSince = System.nanoTime();
            }
        }
    }

    private static void safeRun(Runnable onWakeup) {
        try {
            onWakeup.run();
        } catch (RuntimeException e) {
            log.warn("wake-up callback failed", e);
        }
    }

    @Override
    public void wake(QueueName queue) {
        try (Connection c = pool.getConnection(); var st = c.prepareStatement("SELECT pg_notify(?, ?)")) {
            st.setString(1, Enqueuer.CHANNEL);
            st.setString(2, queue.value());
            st.execute();
        } catch (SQLException e) {
            throw new StoreUnavailableException("wake", e);
        }
    }

    @Override
    public boolean isConnected() {
        return connected;
    }

    @Override
    public long reconnects() {
        return reconnects.get();
    }

    /** Consecutive failed attempts to connect and LISTEN since the last success; 0 while connected. */
    @Override
    public long failedAttempts() {
        return failedAttempts.get();
    }

    @Override
    public void close() {
        Thread t;
        synchronized (this) {
            running = false;
            t = thread;
        }
        if (t == null) return;
        Connection c = connection;
        if (c != null) {
            try {
                c.close(); // unblocks a pending getNotifications at once
            } catch (SQLException ignored) {
                // closing anyway
            }
        }
        t.interrupt();
        try {
            t.join(Duration.ofSeconds(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
