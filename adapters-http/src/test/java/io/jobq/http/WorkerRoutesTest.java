package io.jobq.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.lease.WorkerId;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** GET /workers, and the warning an enqueue answers with when no live worker would run its task. */
class WorkerRoutesTest extends ApiTestCase {
    @Test
    void liveWorkersAreListedAndOnlyATaskNoneOfThemRunsGetsAWarning() {
        f.store().workerAlive(WorkerId.of("w-1"), List.of(QueueName.DEFAULT), List.of(TaskName.of("resize")), Duration.ofSeconds(10));

        ApiClient.Reply workers = f.client().get("/workers");
        assertThat(workers.status()).isEqualTo(200);
        assertThat(workers.json().at("/workers/0/id").asText()).isEqualTo("w-1");
        assertThat(workers.json().at("/workers/0/tasks/0").asText()).isEqualTo("resize");
        assertThat(workers.json().at("/workers/0/running").asLong()).isZero();

        ApiClient.Reply handled = f.client().post("/jobs", "{\"task\": \"resize\"}");
        assertThat(handled.status()).isEqualTo(201);
        assertThat(handled.json().has("warning")).isFalse();
        ApiClient.Reply unknown = f.client().post("/jobs", "{\"task\": \"rezise\"}");
        assertThat(unknown.status()).as("still enqueued: a rolling deploy may bring its handler").isEqualTo(201);
        assertThat(unknown.json().get("warning").asText()).as("w-1 serves default but fails what it cannot run")
                .contains("do not run task 'rezise'").contains("fails and is retried");
        ApiClient.Reply batch = f.client().post("/jobs/batch", "{\"task\": \"resize\", \"queue\": \"other\", \"payloads\": [{}]}");
        assertThat(batch.json().get("warning").asText()).as("w-1 does not serve queue other").contains("'other'");
        assertThat(f.client().get("/metrics").text()).contains("jobq_enqueued_unhandled_total{queue=\"default\",task=\"rezise\"} 1.0");
    }
}
