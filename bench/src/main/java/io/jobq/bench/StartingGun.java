package io.jobq.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;

/**
 * Runs several loops at once, each on a platform thread of its own, released together by one signal, and
 * times them from the signal to the end of the last: how the floor's loops and the enqueue clients are
 * measured, so thread start-up is never timed.
 */
final class StartingGun {
    /** One loop: runs to its end or throws. */
    interface Loop {
        void run() throws Exception;
    }

    private StartingGun() {}

    /** What a time-boxed run counted, and over how long. */
    record Timed(long count, long nanos) {}

    /**
     * @param what names the loops in the error, e.g. "floor loop"
     * @return nanoseconds from the signal until every loop has ended
     * @throws BenchException with the first loop's failure, once all have ended
     */
    static long time(String what, List<Loop> loops) {
        return timeBoxed(what, loops, Duration.ofDays(1), () -> 0, () -> {}).nanos();
    }

    /**
     * Like {@link #time}, but timed for at most {@code box}: if the loops outlast it, {@code count} is read
     * at that moment, {@code stop} is called (the loops must then end soon) and the result is that count
     * over the box; otherwise the count once every loop has ended over the time that took.
     *
     * @throws BenchException with the first loop's failure, once all have ended
     */
    static Timed timeBoxed(String what, List<Loop> loops, Duration box, LongSupplier count, Runnable stop) {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < loops.size(); i++) {
            Loop loop = loops.get(i);
            threads.add(Thread.ofPlatform().name(what + "-" + i).start(() -> {
                try {
                    go.await();
                    loop.run();
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                }
            }));
        }
        try {
            long start = System.nanoTime();
            long deadline = start + box.toNanos();
            go.countDown();
            Timed timed = null;
            for (Thread t : threads) {
                long left = deadline - System.nanoTime();
                if (timed == null && (left <= 0 || !t.join(Duration.ofNanos(left)))) {
                    timed = new Timed(count.getAsLong(), System.nanoTime() - start);
                    stop.run();
                }
                t.join();
            }
            if (timed == null) timed = new Timed(count.getAsLong(), System.nanoTime() - start);
            if (failure.get() != null) throw new BenchException(what + " failed: " + failure.get(), failure.get());
            return timed;
        } catch (InterruptedException e) {
            stop.run();
            // The caller closes what the loops use once this returns: let them end first.
            try {
                for (Thread t : threads) t.join(Duration.ofSeconds(10));
            } catch (InterruptedException again) {
                // interrupted twice: give up waiting
            }
            Thread.currentThread().interrupt();
            throw new BenchException("interrupted");
        }
    }
}
