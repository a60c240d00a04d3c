package io.jobq.bootstrap;

import com.sun.net.httpserver.HttpServer;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.jobq.application.worker.Worker;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.jobq.http.AccessKeys;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Executors;

/**
 * {@code GET /metrics} and {@code GET /health} for a worker-only process, which has no HTTP API. /metrics:
 * the listener's state, maintenance errors, per-task outcomes and run times, queue waits, the pool and the
 * JVM, in Prometheus text format. /health: 200 {@code {"status":"ok","worker":…,"in_hand":n}} while the
 * worker runs, 503 with {@code "status":"stopping"} (or {@code "closed"}) once it stops, for a liveness
 * or readiness probe. The JDK's own HTTP server is enough for two endpoints; the api and all roles serve
 * both through the API instead.
 */
final class MetricsServer implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final HttpServer server;
    private final JvmGcMetrics gcMetrics;

    private MetricsServer(HttpServer server, JvmGcMetrics gcMetrics) {
        this.server = server;
        this.gcMetrics = gcMetrics;
    }

    /**
     * Binds the JVM's meters (memory, threads, processor, GC; the API binds the same in the other roles)
     * and serves the registry.
     *
     * @throws LauncherException if the port cannot be bound
     */
    static MetricsServer start(PrometheusMeterRegistry registry, int port, Worker worker) {
        return start(registry, new InetSocketAddress(port), worker, AccessKeys.OPEN);
    }

    /**
     * As {@link #start(PrometheusMeterRegistry, int, Worker)}, on one address ({@code JOBQ_BIND}), with the API's
     * keys: when an admin key is configured, /metrics needs it or the metrics key ({@code Authorization: Bearer});
     * /health stays open, for probes.
     */
    static MetricsServer start(PrometheusMeterRegistry registry, String host, int port, Worker worker, AccessKeys keys) {
        return start(registry, new InetSocketAddress(host, port), worker, keys);
    }

    private static MetricsServer start(PrometheusMeterRegistry registry, InetSocketAddress address, Worker worker, AccessKeys keys) {
        new JvmMemoryMetrics().bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        JvmGcMetrics gc = new JvmGcMetrics();
        gc.bindTo(registry);
        try {
            HttpServer server = HttpServer.create(address, 0);
            server.createContext("/metrics", exchange -> {
                try (exchange) {
                    if (!"GET".equals(exchange.getRequestMethod())) {
                        exchange.sendResponseHeaders(405, -1);
                        return;
                    }
                    if (!keys.opensMetrics(exchange.getRequestHeaders().getFirst("Authorization"))) {
                        byte[] refusal = "{\"error\":{\"code\":\"unauthorized\",\"message\":\"/metrics needs Authorization: Bearer <the metrics or admin key>\"}}"
                                .getBytes(StandardCharsets.UTF_8);
                        exchange.getResponseHeaders().set("WWW-Authenticate", "Bearer realm=\"jobq\"");
                        exchange.getResponseHeaders().set("Content-Type", "application/json");
                        exchange.sendResponseHeaders(401, refusal.length);
                        try (OutputStream out = exchange.getResponseBody()) {
                            out.write(refusal);
                        }
                        return;
                    }
                    byte[] body = registry.scrape().getBytes(StandardCharsets.UTF_8);
                    exchange.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
                    exchange.sendResponseHeaders(200, body.length);
                    try (OutputStream out = exchange.getResponseBody()) {
                        out.write(body);
                    }
                }
            });
            server.createContext("/health", exchange -> {
                try (exchange) {
                    if (!"GET".equals(exchange.getRequestMethod())) {
                        exchange.sendResponseHeaders(405, -1);
                        return;
                    }
                    String status = worker.status();
                    Map<String, Object> health = new LinkedHashMap<>();
                    health.put("status", "running".equals(status) ? "ok" : status);
                    health.put("worker", worker.id().value()); // printable ASCII, but it may hold a quote: Jackson escapes it
                    health.put("in_hand", worker.inHandCount());
                    byte[] body = JSON.writeValueAsBytes(health);
                    exchange.getResponseHeaders().set("Content-Type", "application/json");
                    exchange.sendResponseHeaders("running".equals(status) ? 200 : 503, body.length);
                    try (OutputStream out = exchange.getResponseBody()) {
                        out.write(body);
                    }
                }
            });
            server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
            server.start();
            return new MetricsServer(server, gc);
        } catch (IOException e) {
            gc.close();
            throw new LauncherException("cannot serve worker metrics on " + address.getHostString() + ":" + address.getPort() + ": " + e.getMessage(), e);
        }
    }

    int port() {
        return server.getAddress().getPort();
    }

    @Override
    public void close() {
        server.stop(0);
        gcMetrics.close();
    }
}
