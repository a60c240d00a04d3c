package io.jobq.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.application.port.ClaimRequest;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.lease.WorkerId;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** POST /jobs/{id}/cancel: cancelled at once, asked of a running job, 409 once finished. */
class CancelRoutesTest extends ApiTestCase {
    long enqueue() {
        ApiClient.Reply r = f.client().post("/jobs", "{\"task\": \"t\"}");
        assertThat(r.status()).isEqualTo(201);
        return r.json().get("id").asLong();
    }

    Job claim() {
        return f.store().claim(new ClaimRequest(List.of(QueueName.DEFAULT), WorkerId.of("w"), 1, Duration.ofMinutes(1))).getFirst();
    }

    @Test
    void aQueuedJobIsCancelledAndAskingAgainAnswersTheSame() {
        long id = enqueue();
        ApiClient.Reply r = f.client().post("/jobs/" + id + "/cancel", "");
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        assertThat(r.json().get("status").asText()).isEqualTo("cancelled");
        assertThat(r.json().get("finished_at").isNull()).isFalse();
        assertThat(f.client().post("/jobs/" + id + "/cancel", "").json().get("status").asText()).isEqualTo("cancelled");
        assertThat(f.client().get("/stats").json().at("/queues/default/cancelled").asLong()).isEqualTo(1);
        assertThat(f.client().get("/jobs?status=cancelled").json().get("jobs")).hasSize(1);
    }

    @Test
    void aRunningJobIsAskedToStopAndStaysRunningUntilItsRunEnds() {
        long id = enqueue();
        claim();
        ApiClient.Reply r = f.client().post("/jobs/" + id + "/cancel", "");
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        assertThat(r.json().get("status").asText()).isEqualTo("running");
        assertThat(r.json().get("cancel_requested").asBoolean()).isTrue();
    }

    @Test
    void aFinishedJobAnswers409NamingItsStatusAndAnUnknownOne404() {
        long id = enqueue();
        f.store().complete(claim().fencingToken(), Optional.empty());
        ApiClient.Reply r = f.client().post("/jobs/" + id + "/cancel", "");
        assertThat(r.status()).as(r.toString()).isEqualTo(409);
        assertThat(r.errorCode()).isEqualTo("job_finished");
        assertThat(r.errorMessage()).contains("is done");
        assertThat(f.client().post("/jobs/99999/cancel", "").status()).isEqualTo(404);
        assertThat(f.client().post("/jobs/abc/cancel", "").errorField()).isEqualTo("id");
        ApiClient.Reply query = f.client().post("/jobs/" + id + "/cancel?force=true", "");
        assertThat(query.status()).isEqualTo(400);
        assertThat(query.errorField()).isEqualTo("force");
    }
}
