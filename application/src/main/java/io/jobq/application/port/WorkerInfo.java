package io.jobq.application.port;

import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.lease.WorkerId;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * A live worker ({@link JobStore#liveWorkers}): what it serves and runs, when it started and was last
 * seen (database clock), and how many jobs it holds running now.
 */
public record WorkerInfo(WorkerId id, List<QueueName> queues, List<TaskName> tasks, Instant startedAt, Instant lastSeen,
        long running) {
    public WorkerInfo {
        Objects.requireNonNull(id, "id");
        queues = List.copyOf(queues);
        tasks = List.copyOf(tasks);
        Objects.requireNonNull(startedAt, "startedAt");
        Objects.requireNonNull(lastSeen, "lastSeen");
    }

    /** Whether this worker would run {@code task} enqueued on {@code queue}. */
    public boolean handles(QueueName queue, TaskName task) {
        return queues.contains(queue) && tasks.contains(task);
    }
}
