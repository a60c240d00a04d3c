package io.jobq.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.application.fake.Await;
import io.jobq.application.fake.InMemoryJobStore;
import io.jobq.application.port.NewJob;
import io.jobq.application.worker.HandlerRegistry;
import io.jobq.application.worker.Worker;
import io.jobq.application.worker.WorkerSettings;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.JobState;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.lease.WorkerId;
import io.jobq.domain.tenant.TenantId;
import io.jobq.http.WorkerMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** A worker-only process's /health and per-task metrics, served by {@link MetricsServer}. */
class MetricsServerTest {
    static final HttpClient HTTP = HttpClient.newHttpClient();

    static HttpResponse<String> get(int port, String path) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void healthFollowsTheWorkersLifeAndMetricsCountEachTasksOutcomesRunTimesAndWaits() throws Exception {
        InMemoryJobStore store = new InMemoryJobStore(Clock.systemUTC());
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        Worker worker = Worker.builder(store, HandlerRegistry.withBuiltIns())
                .settings(WorkerSettings.builder().workerId(WorkerId.of("w\"1")).queues(java.util.List.of(QueueName.of("mail"), QueueName.DEFAULT)).listen(false).pollInterval(Duration.ofMillis(20)).build())
                .listener(WorkerMetrics.bind(registry, Optional.empty())).build();
        worker.start();
        try (MetricsServer server = MetricsServer.start(registry, 0, worker)) {
            HttpResponse<String> up = get(server.port(), "/health");
            assertThat(up.statusCode()).isEqualTo(200);
            assertThat(up.body()).isEqualTo("{\"status\":\"ok\",\"worker\":\"w\\\"1\",\"in_hand\":0}");

            JobId done = store.enqueue(NewJob.of(TenantId.DEFAULT, QueueName.of("mail"), TaskName.of("sleep"), "{\"ms\": 20}")).job().id();
            JobId dead = store.enqueue(NewJob.of(TenantId.DEFAULT, QueueName.DEFAULT, TaskName.of("fail"), "{\"times\": 9, \"permanent\": true}")).job().id();
            Await.until(Duration.ofSeconds(10), "both jobs finished", () -> store.require(done).state() == JobState.DONE
                    && store.require(dead).state() == JobState.DEAD);
            Await.until(Duration.ofSeconds(5), "the metrics", () -> registry.scrape().contains("outcome=\"dead\""));

            String metrics = get(server.port(), "/metrics").body();
            assertThat(metrics).contains("jobq_task_outcomes_total{outcome=\"done\",queue=\"mail\",task=\"sleep\"} 1.0");
            assertThat(metrics).contains("jobq_task_outcomes_total{outcome=\"dead\",queue=\"default\",task=\"fail\"} 1.0");
            assertThat(metrics).contains("jobq_task_run_seconds_count{queue=\"mail\",task=\"sleep\"} 1");
            assertThat(metrics).contains("jobq_task_run_seconds_bucket{queue=\"mail\",task=\"sleep\"");
            assertThat(metrics).contains("jobq_queue_wait_seconds_count{queue=\"mail\"} 1");

            worker.close();
            HttpResponse<String> down = get(server.port(), "/health");
            assertThat(down.statusCode()).isEqualTo(503);
            assertThat(down.body()).contains("\"status\":\"closed\"");
        } finally {
            worker.close();
        }
    }

    @Test
    void withAnAdminKeyMetricsNeedTheMetricsOrAdminKeyAndHealthStaysOpen() throws Exception {
        String admin = "admin-key-0123456789-abcdefghij";
        String metricsKey = "metrics-key-0123456789-abcdefgh";
        InMemoryJobStore store = new InMemoryJobStore(Clock.systemUTC());
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        Worker worker = Worker.builder(store, HandlerRegistry.withBuiltIns())
                .settings(WorkerSettings.builder().listen(false).pollInterval(Duration.ofMillis(20)).build()).build();
        worker.start();
        try (MetricsServer server = MetricsServer.start(registry, "127.0.0.1", 0, worker,
                io.jobq.http.AccessKeys.of(Optional.of(admin), Optional.of(metricsKey)))) {
            HttpResponse<String> none = get(server.port(), "/metrics");
            assertThat(none.statusCode()).isEqualTo(401);
            assertThat(none.headers().firstValue("WWW-Authenticate")).hasValue("Bearer realm=\"jobq\"");
            assertThat(none.body()).doesNotContain("jvm_");
            for (String wrong : new String[] {"Bearer " + metricsKey + "x", "Basic " + metricsKey, "Bearer "}) {
                assertThat(getWith(server.port(), "/metrics", wrong).statusCode()).as(wrong).isEqualTo(401);
            }
            for (String key : new String[] {metricsKey, admin}) {
                HttpResponse<String> ok = getWith(server.port(), "/metrics", "Bearer " + key);
                assertThat(ok.statusCode()).isEqualTo(200);
                assertThat(ok.body()).contains("jvm_memory");
            }
            assertThat(get(server.port(), "/health").statusCode()).as("probes need no key").isEqualTo(200);
        } finally {
            worker.close();
        }
    }

    static HttpResponse<String> getWith(int port, String path, String authorization) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).header("Authorization", authorization).build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
