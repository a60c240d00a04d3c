package io.jobq.http;

import io.jobq.application.port.JobStore;
import io.jobq.application.port.WorkerInfo;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * Whether some live worker would run a task enqueued on a queue ({@link JobStore#liveWorkers}), for the
 * warning an enqueue answers with when none would. The list is read from the store at most once per
 * {@link #MAX_AGE}, so a burst of enqueues costs one read; a failed read gives no warning (the enqueue
 * itself succeeded, and the warning is advice, never a refusal: in a rolling deploy the handler's workers
 * may simply not have started yet).
 */
final class LiveHandlers {
    static final Duration MAX_AGE = Duration.ofSeconds(1);

    private record Snapshot(long readAtNanos, List<WorkerInfo> workers) {}

    private final JobStore store;
    private volatile Snapshot snapshot;

    LiveHandlers(JobStore store) {
        this.store = store;
    }

    /** The warning for a job of {@code task} just enqueued on {@code queue}, if no live worker runs it there. */
    Optional<String> warning(QueueName queue, TaskName task) {
        List<WorkerInfo> workers = workers();
        if (workers == null || workers.stream().anyMatch(w -> w.handles(queue, task))) return Optional.empty();
        if (workers.stream().anyMatch(w -> w.queues().contains(queue))) {
            // they claim by queue, not by task: each one that takes the job fails the attempt (retryably)
            return Optional.of("the live workers of queue '" + queue + "' do not run task '" + task + "': each attempt they"
                    + " claim fails and is retried until a worker with its handler takes it, or its attempts run out"
                    + " (GET /workers lists the live workers and their tasks)");
        }
        return Optional.of("no live worker serves queue '" + queue + "'; the job waits until one that runs task '" + task
                + "' does (GET /workers lists the live workers and their tasks)");
    }

    private List<WorkerInfo> workers() {
        Snapshot s = snapshot;
        long now = System.nanoTime();
        if (s == null || now - s.readAtNanos() > MAX_AGE.toNanos()) {
            try {
                s = new Snapshot(now, store.liveWorkers());
                snapshot = s;
            } catch (RuntimeException e) {
                return null;
            }
        }
        return s.workers();
    }
}
