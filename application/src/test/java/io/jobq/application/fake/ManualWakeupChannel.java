package io.jobq.application.fake;

import io.jobq.application.port.WakeupChannel;
import io.jobq.domain.job.QueueName;
import java.util.Objects;
import java.util.Set;

/**
 * A {@link WakeupChannel} driven by the test: {@link #wakeAll()} delivers a wake-up as a
 * notification would, {@link #simulateReconnect()} as a reconnect would. Thread-safe.
 */
public final class ManualWakeupChannel implements WakeupChannel {
    private Set<QueueName> queues = Set.of();
    private Runnable onWakeup;
    private boolean closed;
    private long reconnects;
    private long delivered;
    private Throwable closeFailure;

    @Override
    public synchronized void start(Set<QueueName> queues, Runnable onWakeup) {
        if (this.onWakeup != null) throw new IllegalStateException("already started");
        if (closed) throw new IllegalStateException("closed");
        this.queues = Set.copyOf(queues);
        this.onWakeup = Objects.requireNonNull(onWakeup, "onWakeup");
    }

    /** Delivers one wake-up to the listener, if started and not closed. */
    public void wakeAll() {
        Runnable target;
        synchronized (this) {
            if (onWakeup == null || closed) return;
            target = onWakeup;
            delivered++;
        }
        target.run();
    }

    @Override
    public void wake(QueueName queue) {
        boolean ours;
        synchronized (this) {
            ours = queues.contains(queue);
        }
        if (ours) wakeAll();
    }

    /** Counts a reconnect and delivers the wake-up a real channel sends after each one. */
    public void simulateReconnect() {
        synchronized (this) {
            reconnects++;
        }
        wakeAll();
    }

    @Override
    public synchronized boolean isConnected() {
        return onWakeup != null && !closed;
    }

    @Override
    public synchronized long reconnects() {
        return reconnects;
    }

    /** How many wake-ups reached a listener. */
    public synchronized long delivered() {
        return delivered;
    }

    public synchronized boolean isStarted() {
        return onWakeup != null;
    }

    public synchronized boolean isClosed() {
        return closed;
    }

    /** From now on {@link #close()} closes the channel and then throws {@code failure} (an Error or a RuntimeException). */
    public synchronized void throwOnClose(Throwable failure) {
        if (!(failure instanceof Error || failure instanceof RuntimeException)) {
            throw new IllegalArgumentException("close() can only throw unchecked throwables, not " + failure);
        }
        closeFailure = failure;
    }

    @Override
    public synchronized void close() {
        closed = true;
        if (closeFailure instanceof Error e) throw e;
        if (closeFailure instanceof RuntimeException e) throw e;
    }
}
