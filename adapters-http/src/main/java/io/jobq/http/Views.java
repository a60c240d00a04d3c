package io.jobq.http;

import java.util.List;
import java.util.Map;

/** The small response bodies besides {@link JobView} and {@link ProblemResponse}. */
public final class Views {
    private Views() {}

    /**
     * {@code GET /jobs}: a page, newest first.
     *
     * @param next pass as {@code after} for the next page; null on the last page
     */
    public record JobPage(List<JobView> jobs, Long next) {}

    /** {@code POST /jobs/batch}: the new ids in payload order; {@code warning} when no live worker runs the task there. */
    public record BatchCreated(List<Long> ids, @com.fasterxml.jackson.annotation.JsonInclude(
            com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL) String warning) {}

    /** {@code PUT /tenants/{tenant}}: the tenant's settings after the change; {@code max_running} null: no cap. */
    public record TenantView(String tenant, String queue, double weight, Integer maxRunning) {}

    /** {@code PUT /queues/{queue}}: the queue's settings after the change; {@code fairness} "jobs" or "work". */
    public record QueueView(String queue, String fairness, RetentionView retention) {}

    /** {@code GET /workers}. */
    public record WorkerList(List<WorkerView> workers) {}

    /** A live worker: what it serves and runs, when it started and was last heard from, its running jobs. */
    public record WorkerView(String id, List<String> queues, List<String> tasks, java.time.Instant startedAt,
            java.time.Instant lastSeen, long running) {}

    /** How long a queue keeps its finished jobs, in seconds; 0: for ever. */
    public record RetentionView(long done, long dead, long cancelled) {}

    /**
     * {@code GET /stats}: per queue, the count of jobs in each of the six states (zeros included).
     * scheduled, queued and running are exact; done and dead may be estimates on large tables (see
     * {@link io.jobq.application.port.JobStore#countsByQueueAndState()}).
     */
    public record Stats(Map<String, Map<String, Long>> queues) {}

    /** {@code GET /health}. */
    public record Health(String status) {}
}
