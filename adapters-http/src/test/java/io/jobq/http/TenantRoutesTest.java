package io.jobq.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.application.port.ClaimRequest;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.lease.WorkerId;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** PUT /tenants/{tenant}: weights set over HTTP steer later claims. */
class TenantRoutesTest extends ApiTestCase {
    @Test
    void answersTheWeightNowInForce() {
        ApiClient.Reply r = f.client().put("/tenants/acme", "{\"weight\": 2.5, \"queue\": \"emails\"}");
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        assertThat(r.json().get("tenant").asText()).isEqualTo("acme");
        assertThat(r.json().get("queue").asText()).isEqualTo("emails");
        assertThat(r.json().get("weight").asDouble()).isEqualTo(2.5);
        ApiClient.Reply defaults = f.client().put("/tenants/acme", "{\"weight\": 10000}");
        assertThat(defaults.json().get("queue").asText()).isEqualTo("default");
        assertThat(defaults.json().get("weight").asDouble()).isEqualTo(10000);
    }

    @Test
    void weights3To1GiveLaterClaims3To1() {
        assertThat(f.client().put("/tenants/heavy", "{\"weight\": 3}").status()).isEqualTo(200);
        assertThat(f.client().put("/tenants/light", "{\"weight\": 1}").status()).isEqualTo(200);
        String payloads = IntStream.range(0, 400).mapToObj(i -> "{}").collect(Collectors.joining(",", "[", "]"));
        // the heavy tenant floods first: with equal weights the first 400 claims would split about 1:1
        assertThat(f.client().post("/jobs/batch", "{\"task\": \"t\", \"tenant\": \"heavy\", \"payloads\": " + payloads + "}").status()).isEqualTo(201);
        assertThat(f.client().post("/jobs/batch", "{\"task\": \"t\", \"tenant\": \"light\", \"payloads\": " + payloads + "}").status()).isEqualTo(201);

        Map<String, Long> claimed = IntStream.range(0, 40)
                .mapToObj(i -> f.store().claim(new ClaimRequest(List.of(QueueName.DEFAULT), WorkerId.of("w" + i % 4), 10, Duration.ofMinutes(1))))
                .flatMap(List::stream)
                .collect(Collectors.groupingBy(j -> j.tenant().value(), Collectors.counting()));
        assertThat(claimed.values().stream().mapToLong(Long::longValue).sum()).isEqualTo(400);
        // 3:1 of 400 is 300:100; allow ±5% of the claims
        assertThat(claimed.get("heavy")).isBetween(280L, 320L);
        assertThat(claimed.get("light")).isBetween(80L, 120L);
    }

    @Test
    void aCapSetOverHttpHoldsTheJobsBeyondItAndNullRemovesIt() {
        ApiClient.Reply set = f.client().put("/tenants/acme", "{\"max_running\": 2}");
        assertThat(set.status()).as(set.toString()).isEqualTo(200);
        assertThat(set.json().get("max_running").asInt()).isEqualTo(2);
        assertThat(set.json().get("weight").asDouble()).as("left out: kept").isEqualTo(1.0);
        String payloads = IntStream.range(0, 5).mapToObj(i -> "{}").collect(Collectors.joining(",", "[", "]"));
        assertThat(f.client().post("/jobs/batch", "{\"task\": \"t\", \"tenant\": \"acme\", \"payloads\": " + payloads + "}").status())
                .isEqualTo(201);

        ApiClient.Reply stats = f.client().get("/stats");
        assertThat(stats.json().at("/queues/default/queued").asLong()).isEqualTo(2);
        assertThat(stats.json().at("/queues/default/held").asLong()).isEqualTo(3);
        assertThat(f.client().get("/jobs?status=held").json().get("jobs")).hasSize(3);
        assertThat(f.client().put("/tenants/acme", "{\"weight\": 2}").json().get("max_running").asInt())
                .as("a weight change keeps the cap").isEqualTo(2);

        ApiClient.Reply removed = f.client().put("/tenants/acme", "{\"max_running\": null}");
        assertThat(removed.json().get("max_running").isNull()).isTrue();
        assertThat(f.client().get("/stats").json().at("/queues/default/queued").asLong()).isEqualTo(5);
    }
}
