package io.jobq.http;

import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.jobq.application.port.JobStore;
import io.jobq.application.port.WorkerInfo;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import java.util.List;

/**
 * {@code GET /workers} → 200 {@code {"workers": [{"id", "queues", "tasks", "started_at", "last_seen",
 * "running"}]}}: the live workers ({@link JobStore#liveWorkers}), by id.
 */
final class WorkerRoutes {
    private final JobStore store;

    WorkerRoutes(JobStore store) {
        this.store = store;
    }

    void register(RoutesConfig routes) {
        routes.get("/workers", this::list);
    }

    private void list(Context ctx) {
        Inputs.requireNoQuery(ctx);
        List<Views.WorkerView> workers = store.liveWorkers().stream().map(WorkerRoutes::view).toList();
        Responses.json(ctx, 200, new Views.WorkerList(workers));
    }

    private static Views.WorkerView view(WorkerInfo w) {
        return new Views.WorkerView(w.id().value(), w.queues().stream().map(QueueName::value).toList(),
                w.tasks().stream().map(TaskName::value).toList(), w.startedAt(), w.lastSeen(), w.running());
    }
}
