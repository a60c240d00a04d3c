package io.jobq.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import io.jobq.postgres.PostgresJobStore;
import io.jobq.postgres.PostgresPool;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** An API whose database cannot be reached (nothing listens on 127.0.0.1:1) answers 503 JSON, never 500. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class StoreUnavailableTest {
    HikariDataSource pool;
    ApiFixture api;
    ApiClient client;

    @BeforeAll
    void start() {
        pool = PostgresPool.create("jdbc:postgresql://127.0.0.1:1/jobq?user=postgres&connectTimeout=1", 2, "unreachable", Duration.ofMillis(300));
        api = ApiFixture.start(null, new PostgresJobStore(pool), HttpSettings.builder().retryAfter(Duration.ofSeconds(7)).build());
        client = api.client();
    }

    @AfterAll
    void stop() {
        api.close();
        pool.close();
    }

    void assertUnavailable(ApiClient.Reply r) {
        assertThat(r.status()).as(r.toString()).isEqualTo(503);
        assertThat(r.errorCode()).isEqualTo("store_unavailable");
        assertThat(r.headers().firstValue("Retry-After")).hasValue("7");
        // no stack trace, driver or SQL detail in the body
        assertThat(r.text()).doesNotContain("Exception", "SQL", "jdbc", "127.0.0.1", "\tat ");
    }

    @Test
    void healthIs503() {
        assertUnavailable(client.get("/health"));
    }

    @Test
    void enqueueIs503() {
        assertUnavailable(client.post("/jobs", "{\"task\": \"t\", \"payload\": {\"a\": 1}}"));
    }

    @Test
    void readsAre503() {
        assertUnavailable(client.get("/jobs/1"));
        assertUnavailable(client.get("/stats"));
        assertUnavailable(client.get("/jobs?limit=2"));
        assertUnavailable(client.get("/schedules?limit=2"));
    }

    @Test
    void dashboardPagesAre503PagesAndItsSamplerKeepsTrying() {
        for (String path : new String[] {"/ui", "/ui/jobs", "/ui/jobs/1"}) {
            ApiClient.Reply r = client.get(path);
            assertThat(r.status()).as(path).isEqualTo(503);
            assertThat(r.headers().firstValue("Content-Type").orElse("")).startsWith("text/html");
            assertThat(r.text()).contains("cannot be reached").doesNotContain("Exception", "jdbc", "\tat ");
        }
        assertThat(client.get("/ui").status()).as("a second visit, the sampler running").isEqualTo(503);
    }

    @Test
    void validationStillAnswers400WithoutTheDatabase() {
        assertThat(client.post("/jobs", "{\"task\": 5}").status()).isEqualTo(400);
    }

    @Test
    void metricsStillScrapeAndCountTheFailure() {
        ApiClient.Reply r = client.get("/metrics");
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.text()).contains("jvm_memory_used_bytes").doesNotContain("jobq_jobs{");
        assertThat(r.text()).containsPattern("jobq_metrics_refresh_failures_total [1-9]");
    }
}
