package io.jobq.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/** A real HTTP client against a running {@link HttpApi}; bodies are sent as given, byte for byte. */
final class ApiClient {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final String base;

    ApiClient(int port) {
        this.base = "http://127.0.0.1:" + port;
    }

    /** One answer: status, headers, raw text and the body parsed as JSON (null when it is not JSON). */
    record Reply(int status, java.net.http.HttpHeaders headers, String text, JsonNode json) {
        String errorCode() {
            return json == null ? null : json.path("error").path("code").asText(null);
        }

        String errorField() {
            return json == null ? null : json.path("error").path("field").asText(null);
        }

        String errorMessage() {
            return json == null ? null : json.path("error").path("message").asText(null);
        }

        @Override
        public String toString() {
            return status + " " + text;
        }
    }

    Reply get(String path) {
        return send(HttpRequest.newBuilder(uri(path)).GET());
    }

    Reply post(String path, String json) {
        return post(path, json.getBytes(StandardCharsets.UTF_8), "application/json");
    }

    Reply post(String path, byte[] body, String contentType) {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri(path)).POST(HttpRequest.BodyPublishers.ofByteArray(body));
        if (contentType != null) b.header("Content-Type", contentType);
        return send(b);
    }

    Reply put(String path, String json) {
        return send(HttpRequest.newBuilder(uri(path)).header("Content-Type", "application/json")
                .PUT(HttpRequest.BodyPublishers.ofString(json)));
    }

    Reply method(String method, String path) {
        return send(HttpRequest.newBuilder(uri(path)).method(method, HttpRequest.BodyPublishers.noBody()));
    }

    private URI uri(String path) {
        return URI.create(base + path);
    }

    private Reply send(HttpRequest.Builder b) {
        try {
            HttpResponse<String> r = http.send(b.timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
            JsonNode json = null;
            if (r.headers().firstValue("Content-Type").orElse("").startsWith("application/json")) json = JSON.readTree(r.body());
            return new Reply(r.statusCode(), r.headers(), r.body(), json);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
