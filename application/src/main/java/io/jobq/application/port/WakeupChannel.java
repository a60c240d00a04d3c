package io.jobq.application.port;

import io.jobq.domain.job.QueueName;
import java.util.Set;

/**
 * Wakes idle workers when work arrives, so they need not poll. The store sends wake-ups itself in
 * the enqueuing transaction (delivered on commit only); this port is the receiving side, plus
 * {@link #wake} for sending one outside a store transaction.
 *
 * <p>Delivery is best effort: a wake-up sent while the listener reconnects is lost. The channel
 * therefore calls {@code onWakeup} after every (re)connect too, and workers keep a fallback poll.
 */
public interface WakeupChannel extends AutoCloseable {

    /**
     * Starts listening in the background. {@code onWakeup} is called (on the channel's thread; it must
     * not block) for each wake-up for one of {@code queues}, and once after each successful
     * (re)connect.
     *
     * @throws IllegalStateException if already started
     */
    void start(Set<QueueName> queues, Runnable onWakeup);

    /** Sends a wake-up for {@code queue} to every listener now. */
    void wake(QueueName queue);

    /** Whether the listener is connected right now. */
    boolean isConnected();

    /**
     * Whether wake-ups are known to arrive right now: the listener is connected AND has seen a test
     * notification of its own come back on its session. False while one is on its way, and when it did
     * not come back (e.g. a transaction-mode pooler between the listener and PostgreSQL accepts LISTEN
     * but never delivers); the worker then lives on its fallback poll. Default: {@link #isConnected()},
     * for channels whose delivery cannot silently fail.
     */
    default boolean isDelivering() {
        return isConnected();
    }

    /** How many times the listener has reconnected after losing its connection. */
    long reconnects();

    /**
     * Consecutive failed attempts to (re)establish the listener since it last succeeded; 0 while
     * connected. A count that keeps growing means wake-ups cannot work here (e.g. a transaction-mode
     * pooler in the way) and the worker lives on its fallback poll. Default: 0, for channels that
     * cannot fail to connect.
     */
    default long failedAttempts() {
        return 0;
    }

    /** Stops listening and releases the connection. Idempotent. */
    @Override
    void close();
}
