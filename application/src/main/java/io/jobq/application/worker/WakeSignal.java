package io.jobq.application.worker;

import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * Tells the claim loop there may be work: a wake-up notification, a slot freed, jobs promoted. Signals
 * coalesce: any number sent while the loop was busy wake it once. {@link #await} returns on a signal or
 * after its timeout (the fallback poll).
 */
final class WakeSignal {
    private final Semaphore permits = new Semaphore(0);

    void signal() {
        if (permits.availablePermits() == 0) permits.release();
    }

    void await(Duration timeout) {
        try {
            permits.tryAcquire(timeout.toNanos(), TimeUnit.NANOSECONDS);
            permits.drainPermits();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
