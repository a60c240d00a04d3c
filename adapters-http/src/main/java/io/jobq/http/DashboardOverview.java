package io.jobq.http;

import io.jobq.application.port.FinishedCount;
import io.jobq.application.port.JobStore;
import io.jobq.application.port.TenantActivity;
import io.jobq.domain.job.JobState;
import io.jobq.domain.job.QueueName;
import io.jobq.http.DashboardModels.Nav;
import io.jobq.http.DashboardModels.Overview;
import io.jobq.http.DashboardModels.QueueRow;
import io.jobq.http.DashboardModels.TenantRow;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.HashMap;

/**
 * The dashboard's first page: the chart, every queue's jobs by state with those finished in the last five
 * minutes (the admin's view: queue-wide numbers would tell a tenant about the others), and the busiest
 * {@value #TENANT_ROWS} tenants with weight, cap, backlog and running (a tenant key: its own rows only).
 */
final class DashboardOverview {
    static final int TENANT_ROWS = 100;
    private static final int REFRESH_SECONDS = 10;

    private final JobStore store;
    private final BacklogHistory history;

    DashboardOverview(JobStore store, BacklogHistory history) {
        this.store = store;
        this.history = history;
    }

    Overview model(Principal who, Nav nav) {
        history.start();
        boolean admin = who.tenant().isEmpty();
        Instant now = Instant.now();
        List<FinishedCount> finished = store.finishedPerMinute(who.tenant(), BacklogHistory.MINUTES);
        Map<Instant, Long> waiting = new LinkedHashMap<>();
        if (admin) history.lastMinutes(now).forEach((minute, s) -> waiting.put(minute, s.waiting()));
        List<TenantActivity> activity = store.tenantActivity(who.tenant(), TENANT_ROWS + 1);
        List<TenantRow> tenants = activity.stream().limit(TENANT_ROWS).map(DashboardOverview::tenantRow).toList();
        List<QueueRow> queues = admin ? queues(finished, now) : List.of();
        return new Overview("Overview", new DashboardModels.Refresh(REFRESH_SECONDS, null), nav, DashboardChart.svg(finished, waiting, now), admin, admin, queues,
                tenants, activity.size() > TENANT_ROWS, tenants.size());
    }

    private List<QueueRow> queues(List<FinishedCount> finished, Instant now) {
        // the current minute and the four before it
        Instant from = now.truncatedTo(ChronoUnit.MINUTES).minus(Duration.ofMinutes(4));
        Map<QueueName, Long> recent = new HashMap<>();
        for (FinishedCount c : finished) {
            if (!c.minute().isBefore(from)) recent.merge(c.queue(), c.count(), Long::sum);
        }
        List<QueueRow> rows = new ArrayList<>();
        store.countsByQueueAndState().forEach((queue, n) -> {
            String q = queue.value();
            StringBuilder link = new StringBuilder();
            DashboardModels.param(link, "queue", q);
            rows.add(new QueueRow(q, DashboardModels.link("/ui/jobs", link.toString()), DashboardModels.link("/ui/jobs", link + "&status=dead"),
                    n.getOrDefault(JobState.SCHEDULED, 0L), n.getOrDefault(JobState.QUEUED, 0L), n.getOrDefault(JobState.HELD, 0L),
                    n.getOrDefault(JobState.RUNNING, 0L), n.getOrDefault(JobState.DONE, 0L), n.getOrDefault(JobState.DEAD, 0L),
                    n.getOrDefault(JobState.CANCELLED, 0L), recent.getOrDefault(queue, 0L)));
        });
        return rows;
    }

    private static TenantRow tenantRow(TenantActivity a) {
        StringBuilder link = new StringBuilder();
        DashboardModels.param(link, "tenant", a.tenant().value());
        DashboardModels.param(link, "queue", a.queue().value());
        return new TenantRow(a.queue().value(), a.tenant().value(), DashboardModels.link("/ui/jobs", link.toString()),
                formatWeight(a.weight().value()), a.maxRunning().map(m -> Integer.toString(m.value())).orElse("none"),
                a.backlog(), a.running());
    }

    /** 3, 0.5, 0.000001: never in scientific notation (weights lie within 0.000001-1,000,000). */
    private static String formatWeight(double w) {
        return java.math.BigDecimal.valueOf(w).stripTrailingZeros().toPlainString();
    }
}
