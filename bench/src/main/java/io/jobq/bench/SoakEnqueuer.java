package io.jobq.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The soak's clients: {@link SoakPlan#clients()} threads POST the plan's jobs to the API process one by one,
 * paced evenly over the enqueue window, each with an idempotency key ({@code soak-<i>}), and send a request
 * again, as it is, after any failure (the API down, a 503, a connection cut) until it is acknowledged (201,
 * or 200: the key was used, the original job returned). What was acknowledged is kept for the final check.
 */
final class SoakEnqueuer {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final SoakPlan plan;
    private final URI jobs;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private final AtomicInteger next = new AtomicInteger();
    /** Acknowledged jobs: index → id. */
    final Map<Integer, Long> acknowledged = new ConcurrentHashMap<>();
    final AtomicLong resent = new AtomicLong();
    /** Answers that are neither an acknowledgement nor worth sending again (a 4xx): each a finding. */
    final List<String> refused = new CopyOnWriteArrayList<>();
    private volatile long startNanos;
    private volatile Duration window;

    SoakEnqueuer(SoakPlan plan, int apiPort) {
        this.plan = plan;
        this.jobs = URI.create("http://127.0.0.1:" + apiPort + "/jobs");
    }

    /** Starts the clients; {@code window} is how long the enqueue is spread over. */
    List<Thread> start(Duration window) {
        this.window = window;
        this.startNanos = System.nanoTime();
        return java.util.stream.IntStream.range(0, plan.clients())
                .mapToObj(c -> Thread.ofPlatform().name("soak-client-" + c).daemon().start(this::client)).toList();
    }

    private void client() {
        int i;
        while ((i = next.getAndIncrement()) < plan.jobs()) {
            Waits.sleepUntil(startNanos + window.toNanos() * i / plan.jobs());
            send(i);
        }
    }

    private void send(int i) {
        String body = "{\"task\": \"" + SoakPlan.task(i) + "\", \"tenant\": \"t" + (i % 8) + "\", \"queue\": \""
                + SoakExperiment.QUEUE + "\", \"max_attempts\": " + SoakPlan.MAX_ATTEMPTS + ", \"idempotency_key\": \"soak-" + i
                + "\", \"payload\": " + SoakPlan.payload(i) + "}";
        HttpRequest request = HttpRequest.newBuilder(jobs).timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build();
        while (true) {
            try {
                HttpResponse<String> r = http.send(request, HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 200 || r.statusCode() == 201) {
                    acknowledged.put(i, JSON.readTree(r.body()).get("id").asLong());
                    return;
                }
                if (r.statusCode() < 500) {
                    refused.add("job " + i + ": " + r.statusCode() + " " + r.body());
                    return;
                }
            } catch (IOException e) {
                // the API is down or the connection was cut: send it again
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            resent.incrementAndGet();
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
