package io.jobq.bootstrap.robustness;

import static io.jobq.application.fake.Json.json;

import com.fasterxml.jackson.databind.JsonNode;
import io.jobq.application.fake.Await;
import io.jobq.application.fake.Json;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** A tiny JSON client for a jobq API process on 127.0.0.1. */
final class Http {
    private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final String base;

    Http(int port) {
        this.base = "http://127.0.0.1:" + port;
    }

    record Response(int status, JsonNode body, java.util.Optional<String> date) {}

    Response post(String path, String json) {
        return send(HttpRequest.newBuilder(URI.create(base + path)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json)));
    }

    Response put(String path, String json) {
        return send(HttpRequest.newBuilder(URI.create(base + path)).header("Content-Type", "application/json")
                .PUT(HttpRequest.BodyPublishers.ofString(json)));
    }

    Response delete(String path) {
        return send(HttpRequest.newBuilder(URI.create(base + path)).DELETE());
    }

    Response get(String path) {
        return send(HttpRequest.newBuilder(URI.create(base + path)).GET());
    }

    /** POST of JSON with {@code Authorization: Bearer <key>}. */
    Response post(String path, String json, String bearer) {
        return send(HttpRequest.newBuilder(URI.create(base + path)).header("Content-Type", "application/json")
                .header("Authorization", "Bearer " + bearer).POST(HttpRequest.BodyPublishers.ofString(json)));
    }

    /** GET with {@code Authorization: Bearer <key>}. */
    Response get(String path, String bearer) {
        return send(HttpRequest.newBuilder(URI.create(base + path)).header("Authorization", "Bearer " + bearer).GET());
    }

    /** Waits until GET /health answers 200, failing if {@code api} dies first. */
    void awaitHealthy(JobqProcess api, Duration timeout) {
        Await.condition(timeout, api.name() + " answers /health (log " + api.logFile() + ")", () -> {
            if (!api.isAlive()) throw new AssertionError(api.name() + " exited:\n" + api.output());
            return get("/health").status() == 200;
        });
    }

    private Response send(HttpRequest.Builder request) {
        try {
            HttpResponse<String> r = client.send(request.timeout(Duration.ofSeconds(30)).build(),
                    HttpResponse.BodyHandlers.ofString());
            return new Response(r.statusCode(), r.body().isEmpty() ? Json.MAPPER.nullNode() : json(r.body()),
                    r.headers().firstValue("Date"));
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
