package io.jobq.postgres;

import io.jobq.application.port.StoreUnavailableException;
import io.jobq.application.port.WakeupChannel;
import io.jobq.application.worker.FatalErrorPolicy;
import io.jobq.domain.job.QueueName;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.postgresql.Driver;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.postgresql.PGProperty;
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
 * <p>LISTEN needs a real session. Where connecting fails, the channel logs a warning on every failed
 * attempt and an error once after five in a row, and reports {@link #isConnected()} false. Where it
 * connects but nothing is delivered — a transaction-mode pooler (PgBouncer, pgcat) accepts LISTEN and
 * then hands the session to other clients — a {@link DeliveryProbe} finds out: after every
 * (re)connect and every {@code probeInterval} the channel NOTIFYs itself over the pool, and when that
 * does not come back within {@code probeTimeout} it logs a WARN naming poolers (once per connection)
 * and reports {@link #isDelivering()} false. Either way the worker lives on its fallback poll.
 *
 * <p>No {@link Throwable} ends the listener thread: an exception or {@link Error} from the connection
 * is logged and followed by a reconnect after the backoff; one from {@code onWakeup} is logged and the
 * connection kept. (A VM error that leaves the process unusable is the launcher's to handle, e.g. by
 * exiting on OutOfMemoryError: such an error is handed to the JVM's default uncaught-exception
 * handler, which the launcher sets to halt.)
 */
public final class PostgresWakeupChannel implements WakeupChannel {
    private static final Logger log = LoggerFactory.getLogger(PostgresWakeupChannel.class);

    /**
     * @param pollTimeout longest wait for a notification before checking for shutdown; at least 2 ms. Default: 250 ms.
     * @param checkInterval quiet time after which a no-op query checks the connection. Default: 5 s.
     * @param maxBackoff the longest pause between reconnect attempts. Default: 5 s.
     * @param probeTimeout how long the test notification may take to come back, counted from its
     *     commit, before wake-ups count as not delivered. Default: 5 s (a healthy server takes
     *     milliseconds; the margin is for a loaded one).
     * @param probeInterval how often a connected listener sends a test notification again. Default: 1 min.
     */
    public record Options(Duration pollTimeout, Duration checkInterval, Duration maxBackoff, Duration probeTimeout,
            Duration probeInterval) {
        public static final Options DEFAULTS = new Options(Duration.ofMillis(250), Duration.ofSeconds(5), Duration.ofSeconds(5),
                Duration.ofSeconds(5), Duration.ofMinutes(1));

        public Options {
            Objects.requireNonNull(pollTimeout, "pollTimeout");
            Objects.requireNonNull(checkInterval, "checkInterval");
            Objects.requireNonNull(maxBackoff, "maxBackoff");
            Objects.requireNonNull(probeTimeout, "probeTimeout");
            Objects.requireNonNull(probeInterval, "probeInterval");
            // 1 ms is what the listener's sockets answer at once (PromptPeekSocketFactory): a wait of 1 ms would not wait.
            if (pollTimeout.toMillis() < 2) throw new IllegalArgumentException("pollTimeout must be >= 2 ms, was " + pollTimeout);
            if (checkInterval.compareTo(pollTimeout) < 0) throw new IllegalArgumentException("checkInterval must be >= pollTimeout");
            if (maxBackoff.toMillis() < 100) throw new IllegalArgumentException("maxBackoff must be >= 100 ms, was " + maxBackoff);
            if (probeTimeout.toMillis() < 1) throw new IllegalArgumentException("probeTimeout must be >= 1 ms, was " + probeTimeout);
            if (probeInterval.compareTo(probeTimeout) < 0) throw new IllegalArgumentException("probeInterval must be >= probeTimeout");
        }

        /** The first three settings, with the default probe timeout and interval. */
        public Options(Duration pollTimeout, Duration checkInterval, Duration maxBackoff) {
            this(pollTimeout, checkInterval, maxBackoff, DEFAULTS.probeTimeout, DEFAULTS.probeInterval);
        }

        /** These options with another probe timeout and interval. */
        public Options withProbe(Duration timeout, Duration interval) {
            return new Options(pollTimeout, checkInterval, maxBackoff, timeout, interval);
        }
    }

    /** Opens the dedicated LISTEN connection; a seam for tests that inject failures. */
    @FunctionalInterface
    interface Opener {
        Connection open(String url) throws SQLException;
    }

    private final String listenUrl;
    private final DataSource pool;
    private final Options options;
    private final Opener opener;
    private final DeliveryProbe probe;
    private final AtomicLong reconnects = new AtomicLong();
    private final AtomicLong failedAttempts = new AtomicLong();
    private volatile boolean connected;
    private volatile boolean running;
    private volatile Thread thread;
    private volatile Connection connection;

    /**
     * @param listenUrl JDBC URL (with credentials) for the dedicated LISTEN connection; must reach
     *     PostgreSQL directly, not through a transaction-mode pooler
     * @param pool the pool used by {@link #wake} and to send the test notifications (see the class comment)
     */
    public PostgresWakeupChannel(String listenUrl, DataSource pool, Options options) {
        this(listenUrl, pool, options, PostgresWakeupChannel::openListenConnection);
    }

    /**
     * Opens the connection the listener LISTENs on: {@code listenUrl} with {@link #listenProperties}. Public so
     * that the bench's pickup floor listens as jobq does.
     *
     * @throws SQLException as {@link DriverManager#getConnection(String, Properties)}
     */
    public static Connection openListenConnection(String listenUrl) throws SQLException {
        return DriverManager.getConnection(listenUrl, listenProperties(listenUrl));
    }

    /**
     * The listener connection's defaults (the URL's own parameters win): {@link PromptPeekSocketFactory} as its
     * socket factory, so that a wake-up reaches the worker without pgjdbc's 1 ms wait; none where the URL asks
     * for GSS encryption ({@code gssEncMode} prefer or require), whose reads go through a stream of pgjdbc's
     * that retries a read timed out instead of answering "nothing pending", so that the peek would spin.
     */
    static Properties listenProperties(String listenUrl) {
        Properties defaults = new Properties();
        Properties parsed = Driver.parseURL(listenUrl, null);
        String gss = parsed == null ? null : PGProperty.GSS_ENC_MODE.getOrDefault(parsed);
        boolean gssEncrypted = "prefer".equalsIgnoreCase(gss) || "require".equalsIgnoreCase(gss);
        if (!gssEncrypted) defaults.setProperty(PGProperty.SOCKET_FACTORY.getName(), PromptPeekSocketFactory.class.getName());
        return defaults;
    }

    PostgresWakeupChannel(String listenUrl, DataSource pool, Options options, Opener opener) {
        this.listenUrl = Objects.requireNonNull(listenUrl, "listenUrl");
        this.pool = Objects.requireNonNull(pool, "pool");
        this.options = Objects.requireNonNull(options, "options");
        this.opener = Objects.requireNonNull(opener, "opener");
        this.probe = new DeliveryProbe(pool, options.probeTimeout(), options.probeInterval());
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
        thread = Thread.ofPlatform().daemon().name("jobq-listener")
                // Reachable only if the handling in listenLoop's catch fails itself (out of memory): still not silent.
                .uncaughtExceptionHandler((t, e) -> log.error("the wake-up listener thread ended; the worker only polls now", e))
                .start(() -> listenLoop(names, onWakeup));
    }

    private void listenLoop(Set<String> queues, Runnable onWakeup) {
        long backoffMs = 100;
        boolean everConnected = false;
        while (running) {
            try (Connection c = opener.open(listenUrl)) {
                connection = c;
                try (Statement st = c.createStatement()) {
                    // One statement, so one transaction: through a pooler both land on the same server session,
                    // and a probe that comes back proves the wake-up channel too. Wake-up channel last and no space
                    // after ';', so pg_stat_activity.query still reads exactly "LISTEN jobq_wakeup".
                    st.execute("LISTEN " + probe.channel() + ";LISTEN " + Enqueuer.CHANNEL);
                }
                probe.connected(System.nanoTime());
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
            } catch (Throwable e) {
                if (FatalErrorPolicy.isFatal(e)) escalate(e);
                if (!running) break;
                long failures = failedAttempts.incrementAndGet();
                if (!(e instanceof SQLException)) {
                    // Not a database failure: a bug or an Error. Loud, with the stack, but the thread carries on.
                    log.error("wake-up listener failed unexpectedly; reconnecting in {} ms, polling meanwhile", backoffMs, e);
                } else if (connected) {
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
                probe.disconnected();
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
            probe.tick(System.nanoTime());
            PGNotification[] notifications = pg.getNotifications(timeout);
            if (notifications != null && notifications.length > 0) {
                quietSince = System.nanoTime();
                boolean ours = false;
                for (PGNotification n : notifications) {
                    if (n.getName().equals(probe.channel())) probe.received(n.getParameter(), quietSince);
                    else ours |= queues.contains(n.getParameter());
                }
                if (ours) safeRun(onWakeup);
            } else if (System.nanoTime() - quietSince > options.checkInterval().toNanos()) {
                try (Statement st = c.createStatement()) {
                    st.execute("SELECT 1");
                }
                quietSince = System.nanoTime();
            }
        }
    }

    /**
     * Hands an error after which the JVM cannot be trusted ({@link FatalErrorPolicy#isFatal}) to the JVM's
     * default uncaught-exception handler, which the launcher sets to halt the process (exit status 3). An
     * embedding application without one keeps today's behaviour: the error is logged and the thread goes on.
     */
    private static void escalate(Throwable fatal) {
        Thread.UncaughtExceptionHandler handler = Thread.getDefaultUncaughtExceptionHandler();
        if (handler != null) handler.uncaughtException(Thread.currentThread(), fatal);
    }

    private static void safeRun(Runnable onWakeup) {
        try {
            onWakeup.run();
        } catch (Throwable e) {
            if (FatalErrorPolicy.isFatal(e)) escalate(e);
            // The connection is fine; the callback is not ours to fix. Keep listening.
            log.error("wake-up callback failed", e);
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

    /**
     * Whether the latest test notification came back on the current LISTEN connection (see the class
     * comment): false while disconnected, until the first one after a (re)connect returns (normally
     * milliseconds), and after one did not return within {@code probeTimeout}.
     */
    @Override
    public boolean isDelivering() {
        return probe.delivering();
    }

    /** The channel this listener's test notifications use, so a test can watch them from outside. */
    String probeChannel() {
        return probe.channel();
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
