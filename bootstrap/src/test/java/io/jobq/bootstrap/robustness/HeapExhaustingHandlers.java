package io.jobq.bootstrap.robustness;

import io.jobq.application.worker.HandlerSettings;
import io.jobq.application.worker.JobHandler;
import io.jobq.application.worker.JobHandlerProvider;
import io.jobq.domain.job.TaskName;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A test-only handler plug-in, never shipped: {@link PluginJar} packs it into a jar for a worker
 * process's class path. Its task {@value #TASK} keeps allocating 1 MiB arrays, all kept reachable,
 * until the heap runs out.
 */
public final class HeapExhaustingHandlers implements JobHandlerProvider {
    static final String TASK = "exhaust_heap";

    @Override
    public Map<TaskName, JobHandler> handlers(HandlerSettings settings) {
        JobHandler exhaust = ctx -> {
            List<long[]> hoard = new ArrayList<>();
            while (true) hoard.add(new long[128 * 1024]);
        };
        return Map.of(TaskName.of(TASK), exhaust);
    }
}
