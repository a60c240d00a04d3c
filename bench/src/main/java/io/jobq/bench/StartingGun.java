package io.jobq.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

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

    /**
     * @param what names the loops in the error, e.g. "floor loop"
     * @return nanoseconds from the signal until every loop has ended
     * @throws BenchException with the first loop's failure, once all have ended
     */
    static long time(String what, List<Loop> loops) {
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
            go.countDown();
            for (Thread t : threads) t.join();
            long took = System.nanoTime() - start;
            if (failure.get() != null) throw new BenchException(what + " failed: " + failure.get(), failure.get());
            return took;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BenchException("interrupted");
        }
    }
}
