package io.jobq.application.worker;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A one-way "stop" switch that the worker's loops sleep on: {@link #pause} returns early, with
 * {@code true}, once {@link #stop} was called. An interrupt counts as stop (and stays set on the thread).
 */
final class StopLatch {
    private final CountDownLatch latch = new CountDownLatch(1);

    void stop() {
        latch.countDown();
    }

    boolean isStopped() {
        return latch.getCount() == 0;
    }

    /** Sleeps up to {@code timeout}; returns whether the switch was (or is) thrown meanwhile. */
    boolean pause(Duration timeout) {
        try {
            return latch.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return true;
        }
    }
}
