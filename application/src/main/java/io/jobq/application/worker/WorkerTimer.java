package io.jobq.application.worker;

import java.util.Objects;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A worker's timer (task timeouts, lease-jeopardy checks): one thread running scheduled tasks. A
 * plain {@link ScheduledThreadPoolExecutor} stores whatever a task throws in a future nobody reads,
 * and never runs a periodic task that threw again. Here every {@link Runnable} task (also those of
 * {@code execute} and {@code submit}) hands anything it throws to {@code onError} instead, and a
 * periodic task keeps its schedule.
 */
final class WorkerTimer extends ScheduledThreadPoolExecutor {
    private final Consumer<Throwable> onError;

    /** @param onError gets every throwable a task throws, on the timer's thread; must not throw */
    WorkerTimer(ThreadFactory threads, Consumer<Throwable> onError) {
        super(1, threads);
        this.onError = Objects.requireNonNull(onError, "onError");
        // A run's timeout is cancelled when the run ends; drop it from the queue then, not when it would
        // have fired (with long timeouts and many short runs, cancelled ones would pile up in the heap).
        setRemoveOnCancelPolicy(true);
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
        return super.schedule(guarded(command), delay, unit);
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
        return super.scheduleAtFixedRate(guarded(command), initialDelay, period, unit);
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
        return super.scheduleWithFixedDelay(guarded(command), initialDelay, delay, unit);
    }

    private Runnable guarded(Runnable task) {
        Objects.requireNonNull(task, "task");
        return () -> {
            try {
                task.run();
            } catch (Throwable t) {
                onError.accept(t);
            }
        };
    }
}
