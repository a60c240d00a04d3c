package io.jobq.application.worker;

import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.application.fake.Await;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class WorkerTimerTest {
    final List<Throwable> reported = new CopyOnWriteArrayList<>();
    final WorkerTimer timer = new WorkerTimer(Thread.ofPlatform().daemon(true).factory(), reported::add);

    @AfterEach
    void stop() {
        timer.shutdownNow();
    }

    @Test
    void aPeriodicTaskThatThrowsAnErrorIsReportedAndKeepsItsSchedule() {
        AtomicInteger runs = new AtomicInteger();
        AssertionError bug = new AssertionError("first run fails");
        timer.scheduleWithFixedDelay(() -> {
            if (runs.incrementAndGet() == 1) throw bug;
        }, 0, 10, TimeUnit.MILLISECONDS);

        // A plain ScheduledThreadPoolExecutor would never run it again, and report nothing.
        Await.until(Duration.ofSeconds(10), "more runs after the failure", () -> runs.get() >= 3);
        assertThat(reported).containsExactly(bug);
    }

    @Test
    void aOneShotTaskThatThrowsIsReportedNotBuriedInItsFuture() {
        OutOfMemoryError oom = new OutOfMemoryError("simulated");
        Runnable task = () -> {
            throw oom;
        };
        timer.schedule(task, 1, TimeUnit.MILLISECONDS);
        timer.execute(() -> {
            throw new IllegalStateException("via execute");
        });

        Await.until(Duration.ofSeconds(10), "both reported", () -> reported.size() == 2);
        assertThat(reported).contains(oom).anySatisfy(t -> assertThat(t).hasMessage("via execute"));
    }
}
