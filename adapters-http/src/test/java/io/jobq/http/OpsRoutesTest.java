package io.jobq.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.application.port.ClaimRequest;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.lease.WorkerId;
import io.jobq.postgres.testing.TestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** /health, /stats and /metrics on a reachable database. */
class OpsRoutesTest extends ApiTestCase {
    /** Prometheus text format 0.0.4: comments, or name{labels} value. */
    static final Pattern HELP = Pattern.compile("# HELP [a-zA-Z_:][a-zA-Z0-9_:]* .*");
    static final Pattern TYPE = Pattern.compile("# TYPE [a-zA-Z_:][a-zA-Z0-9_:]* (counter|gauge|summary|histogram|untyped)");
    static final Pattern SAMPLE = Pattern.compile(
            "[a-zA-Z_:][a-zA-Z0-9_:]*(\\{[a-zA-Z_][a-zA-Z0-9_]*=\"(?:[^\"\\\\\\n]|\\\\.)*\"(,[a-zA-Z_][a-zA-Z0-9_]*=\"(?:[^\"\\\\\\n]|\\\\.)*\")*,?\\})?"
                    + " (-?[0-9.]+([eE][-+]?[0-9]+)?|NaN|\\+Inf|-Inf)( -?[0-9]+)?");

    /** Gauges refreshed on every scrape, so a test sees its own writes. */
    @Override
    HttpSettings settings() {
        return HttpSettings.builder().metricsMaxAge(Duration.ZERO).build();
    }

    void seed() {
        f.client().post("/jobs/batch", "{\"task\": \"t\", \"tenant\": \"acme\", \"payloads\": [1, 2, 3]}");
        f.client().post("/jobs", "{\"task\": \"t\", \"tenant\": \"globex\"}");
        f.client().post("/jobs", "{\"task\": \"t\", \"queue\": \"emails\", \"delay_seconds\": 600}");
        Job running = f.store().claim(new ClaimRequest(List.of(QueueName.DEFAULT), WorkerId.of("w1"), 1, Duration.ofMinutes(1))).getFirst();
        f.store().complete(running.fencingToken(), Optional.empty());
    }

    @Test
    void healthIsOkAfterADatabaseRoundTrip() {
        ApiClient.Reply r = f.client().get("/health");
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.text()).isEqualTo("{\"status\":\"ok\"}");
    }

    @Test
    void statsCountJobsByQueueAndStatus() {
        seed();
        ApiClient.Reply r = f.client().get("/stats");
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.json().get("queues").get("default").toString())
                .isEqualTo("{\"scheduled\":0,\"queued\":3,\"held\":0,\"running\":0,\"done\":1,\"dead\":0,\"cancelled\":0}");
        assertThat(r.json().get("queues").get("emails").get("scheduled").asLong()).isEqualTo(1);
    }

    @Test
    void metricsAreValidPrometheusTextWithEveryFamily() {
        seed();
        f.client().get("/jobs/1");
        ApiClient.Reply r = f.client().get("/metrics");
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.headers().firstValue("Content-Type").orElse("")).startsWith("text/plain");
        List<String> lines = r.text().lines().filter(l -> !l.isEmpty()).toList();
        assertThat(lines).allSatisfy(l -> assertThat(HELP.matcher(l).matches() || TYPE.matcher(l).matches() || SAMPLE.matcher(l).matches())
                .as("not Prometheus text: %s", l).isTrue());
        assertThat(lines).contains(
                "jobq_jobs{queue=\"default\",status=\"queued\"} 3.0",
                "jobq_jobs{queue=\"default\",status=\"done\"} 1.0",
                "jobq_jobs{queue=\"emails\",status=\"scheduled\"} 1.0",
                "jobq_tenant_backlog{queue=\"default\",tenant=\"acme\"} 2.0",
                "jobq_tenant_backlog{queue=\"default\",tenant=\"globex\"} 1.0",
                "jobq_enqueued_total{queue=\"default\"} 4.0",
                "jobq_enqueued_total{queue=\"emails\"} 1.0");
        assertThat(lines).anyMatch(l -> l.startsWith("jobq_oldest_runnable_age_seconds{queue=\"default\"} "));
        assertThat(lines).anyMatch(l -> l.startsWith("jobq_http_server_requests_seconds_count{method=\"GET\",route=\"/jobs/{id}\",status=\"200\"} "));
        for (String family : List.of("# TYPE jvm_memory_used_bytes gauge", "# TYPE jvm_threads_live_threads gauge",
                "# TYPE system_cpu_count gauge", "# TYPE jobq_metrics_refresh_failures_total counter")) {
            assertThat(lines).contains(family);
        }
        assertThat(lines).anyMatch(l -> l.startsWith("jvm_gc_"));
    }

    @Test
    void storeGaugesAreReusedWithinTheirMaxAge(TestDatabase db) {
        try (ApiFixture cached = ApiFixture.start(db, HttpSettings.builder().metricsMaxAge(Duration.ofHours(1)).build())) {
            cached.client().get("/metrics");
            cached.client().post("/jobs", "{\"task\": \"t\"}");
            // the job exists, but the gauge still shows the first scrape's reading
            assertThat(cached.client().get("/metrics").text()).doesNotContain("jobq_jobs{queue=\"default\",status=\"queued\"} 1.0");
            assertThat(f.client().get("/metrics").text()).contains("jobq_jobs{queue=\"default\",status=\"queued\"} 1.0");
        }
    }
}
