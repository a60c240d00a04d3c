package io.jobq.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.application.port.JobStore;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** PUT /queues/{queue}: the fairness a queue charges by, set over HTTP. */
class QueueRoutesTest extends ApiTestCase {
    @Test
    void aWorkQueueHoldsAllButANewTenantsFirstJobAndJobsReleasesThem() {
        ApiClient.Reply set = f.client().put("/queues/default", "{\"fairness\": \"work\"}");
        assertThat(set.status()).as(set.toString()).isEqualTo(200);
        assertThat(set.json().get("queue").asText()).isEqualTo("default");
        assertThat(set.json().get("fairness").asText()).isEqualTo("work");
        String payloads = IntStream.range(0, JobStore.WORK_WINDOW + 8).mapToObj(i -> "{}").collect(Collectors.joining(",", "[", "]"));
        assertThat(f.client().post("/jobs/batch", "{\"task\": \"t\", \"tenant\": \"acme\", \"payloads\": " + payloads + "}").status())
                .isEqualTo(201);
        ApiClient.Reply stats = f.client().get("/stats");
        assertThat(stats.json().at("/queues/default/queued").asLong()).as("no run measured yet: one").isEqualTo(1);
        assertThat(stats.json().at("/queues/default/held").asLong()).isEqualTo(JobStore.WORK_WINDOW + 7);

        ApiClient.Reply back = f.client().put("/queues/default", "{\"fairness\": \"jobs\"}");
        assertThat(back.json().get("fairness").asText()).isEqualTo("jobs");
        assertThat(f.client().get("/stats").json().at("/queues/default/queued").asLong()).isEqualTo(JobStore.WORK_WINDOW + 8);
    }

    @Test
    void retentionIsSetPerStateAndWhatIsLeftOutStays() {
        ApiClient.Reply set = f.client().put("/queues/reports", "{\"retention\": {\"done\": 3600, \"dead\": 0}}");
        assertThat(set.status()).as(set.toString()).isEqualTo(200);
        assertThat(set.json().at("/retention/done").asLong()).isEqualTo(3600);
        assertThat(set.json().at("/retention/dead").asLong()).as("0: for ever").isZero();
        assertThat(set.json().at("/retention/cancelled").asLong()).as("the default").isEqualTo(604_800);
        assertThat(set.json().get("fairness").asText()).isEqualTo("jobs");
        ApiClient.Reply work = f.client().put("/queues/reports", "{\"fairness\": \"work\"}");
        assertThat(work.json().at("/retention/done").asLong()).as("kept").isEqualTo(3600);
    }
}
