package io.jobq.postgres;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.HexFormat;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Proves that a LISTEN session really receives notifications, for {@link PostgresWakeupChannel}.
 *
 * <p>A probe is a NOTIFY with a fresh token on {@link #channel()}, a channel only this listener
 * LISTENs to, sent over the POOL — another session, as an enqueue's NOTIFY is — and awaited on the
 * listening connection for {@code timeout}. Why not over the listening connection itself: PostgreSQL
 * delivers a session's own notifications to it at commit, in the reply to that very NOTIFY, so
 * through a transaction-mode pooler the token would come back although nothing sent by others ever
 * would. Why a channel of its own rather than {@code jobq_wakeup}: every listener of {@code jobq_wakeup}
 * (all workers, any monitoring session) would receive every probe, and whoever reads its payloads
 * as queue names would see a foreign one. The probe channel is LISTENed in the same statement (one
 * transaction, so one server session even through a pooler) as {@code jobq_wakeup}, so a token that
 * comes back proves the wake-up channel is delivered too.
 *
 * <p>When the token does not come back it logs one WARN per connection naming transaction-mode
 * poolers and the fix; {@link #delivering()} is then false until a later probe comes back (one runs
 * every {@code interval} while connected, and after every reconnect). Not thread-safe: only the
 * listener thread calls it, except {@link #delivering()}. The NOTIFY is sent on a virtual thread, so
 * waiting for a pooled connection never stalls the listener.
 */
final class DeliveryProbe {
    private static final Logger log = LoggerFactory.getLogger(PostgresWakeupChannel.class);

    private enum Outcome { IN_FLIGHT, CAME_BACK, TIMED_OUT }

    private final DataSource pool;
    private final Duration timeout;
    private final Duration interval;
    private final String channel = "jobq_probe_" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
    private volatile boolean delivering;
    private long sequence;
    private String token;
    private CompletableFuture<Long> sent;
    private long dispatchedNanos;
    private Outcome outcome;
    private long nextProbeNanos;
    private boolean warned;       // on the current connection
    private boolean outstanding;  // a warning not yet followed by a probe that came back

    DeliveryProbe(DataSource pool, Duration timeout, Duration interval) {
        this.pool = pool;
        this.timeout = timeout;
        this.interval = interval;
    }

    /** The channel name (a lower-case identifier, 27 characters) this listener must LISTEN to. */
    String channel() {
        return channel;
    }

    /** Whether the latest probe on the current connection came back. */
    boolean delivering() {
        return delivering;
    }

    /** A new LISTEN session is up: nothing is proven on it yet; probe at the next {@link #tick}. */
    void connected(long nowNanos) {
        delivering = false;
        warned = false;
        token = null;
        nextProbeNanos = nowNanos;
    }

    /** The session is gone: nothing is delivered until the next one is proven. */
    void disconnected() {
        delivering = false;
    }

    /** A notification on {@link #channel()} arrived on the listening connection. */
    void received(String payload, long nowNanos) {
        if (token == null || !token.equals(payload) || outcome == Outcome.CAME_BACK) return;
        if (outstanding || outcome == Outcome.TIMED_OUT) {
            log.info("wake-up listener: test notification {} came back {} ms after it was sent; wake-ups are delivered",
                    token, Duration.ofNanos(nowNanos - dispatchedNanos).toMillis());
            outstanding = false;
        } else {
            log.debug("wake-up listener: test notification {} came back", token);
        }
        outcome = Outcome.CAME_BACK;
        delivering = true;
        nextProbeNanos = nowNanos + interval.toNanos();
    }

    /** Sends a probe when one is due, and judges the one in flight. Call often (every listener poll). */
    void tick(long nowNanos) {
        if (token == null || outcome != Outcome.IN_FLIGHT) {
            if (nowNanos - nextProbeNanos >= 0) send();
            return;
        }
        if (!sent.isDone()) return; // still waiting for a pooled connection; the clock starts at the NOTIFY's commit
        if (sent.isCompletedExceptionally()) {
            // Says nothing about delivery: leave the gauge as it is and try again soon.
            log.warn("wake-up listener: could not send its test notification ({}); trying again in {} ms",
                    describe(sent.exceptionNow()), timeout.toMillis());
            token = null;
            nextProbeNanos = nowNanos + timeout.toNanos();
        } else if (nowNanos - sent.join() > timeout.toNanos()) {
            timedOut();
            nextProbeNanos = nowNanos + interval.toNanos();
        }
    }

    private void timedOut() {
        outcome = Outcome.TIMED_OUT;
        delivering = false;
        if (warned) {
            log.debug("wake-up listener: test notification {} did not come back within {} ms", token, timeout.toMillis());
            return;
        }
        warned = true;
        outstanding = true;
        log.warn("wake-up listener: a test notification sent from another session did not come back within {} ms, so "
                + "wake-ups are not delivered to this worker although LISTEN succeeded. The usual cause is a "
                + "transaction-mode pooler between the worker and PostgreSQL (PgBouncer with pool_mode=transaction, pgcat, "
                + "Supavisor, Odyssey, or a proxy such as RDS Proxy that multiplexes sessions): it hands the session that "
                + "ran LISTEN to other clients and drops its notifications. Connect the worker's listener directly to "
                + "PostgreSQL or through a session-mode pool. Until then the worker polls (every poll interval) and "
                + "jobq_listener_delivering is 0; this is checked again every {} s and on every reconnect.",
                timeout.toMillis(), interval.toSeconds());
    }

    /** A failure in one line for a log: its message, or its type when it has none. */
    private static String describe(Throwable e) {
        return e.getMessage() == null ? e.toString() : e.getMessage();
    }

    private void send() {
        String t = token = Long.toString(++sequence);
        outcome = Outcome.IN_FLIGHT;
        dispatchedNanos = System.nanoTime();
        CompletableFuture<Long> f = sent = new CompletableFuture<>();
        Thread.ofVirtual().name("jobq-listener-probe").start(() -> {
            try (Connection c = pool.getConnection(); PreparedStatement st = c.prepareStatement("SELECT pg_notify(?, ?)")) {
                st.setString(1, channel);
                st.setString(2, t);
                st.execute();
                f.complete(System.nanoTime());
            } catch (Throwable e) {
                f.completeExceptionally(e);
            }
        });
    }
}
