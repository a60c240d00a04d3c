package io.jobq.postgres;

import io.jobq.application.port.ClaimRequest;
import io.jobq.application.port.NewJob;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.lease.WorkerId;
import io.jobq.domain.tenant.TenantId;
import java.time.Duration;
import java.util.List;

/** Shorthands for store tests: jobs with defaults and claims. */
final class StoreFixtures {
    static final QueueName Q = QueueName.DEFAULT;
    static final TaskName TASK = TaskName.of("noop");
    static final WorkerId W1 = WorkerId.of("w1");
    static final Duration LEASE = Duration.ofSeconds(30);

    private StoreFixtures() {}

    static NewJob job(String tenant) {
        return NewJob.of(TenantId.of(tenant), Q, TASK, "{}");
    }

    static NewJob job(String tenant, String payload) {
        return NewJob.of(TenantId.of(tenant), Q, TASK, payload);
    }

    static ClaimRequest claim(WorkerId worker, int limit) {
        return new ClaimRequest(List.of(Q), worker, limit, LEASE);
    }

    static ClaimRequest claim(WorkerId worker, int limit, Duration lease) {
        return new ClaimRequest(List.of(Q), worker, limit, lease);
    }

    static String tenantOf(Job j) {
        return j.tenant().value();
    }

    /**
     * How many migrations ship ({@code V<n>__*.sql} under {@link Migrations#LOCATION}): what a fresh schema
     * applies, so tests that count applied migrations need no edit for each new version.
     */
    static int shippedMigrations() {
        try {
            java.net.URL dir = Migrations.class.getClassLoader().getResource("io/jobq/postgres/migration");
            try (var files = java.nio.file.Files.list(java.nio.file.Path.of(dir.toURI()))) {
                return (int) files.filter(f -> f.getFileName().toString().matches("V\\d+__.+\\.sql")).count();
            }
        } catch (java.io.IOException | java.net.URISyntaxException e) {
            throw new IllegalStateException("cannot list the migrations", e);
        }
    }
}
