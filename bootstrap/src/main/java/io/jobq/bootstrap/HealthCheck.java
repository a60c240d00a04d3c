package io.jobq.bootstrap;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * The container HEALTHCHECK: exits 0 when {@code GET http://127.0.0.1:$PORT/health} answers 200 within
 * 4 s, 1 otherwise. A class of its own so the image needs no curl.
 */
public final class HealthCheck {
    private HealthCheck() {}

    public static void main(String[] args) {
        String port = System.getenv().getOrDefault("PORT", "8000");
        try {
            HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
            HttpResponse<Void> r = client.send(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/health")).timeout(Duration.ofSeconds(4)).build(),
                    HttpResponse.BodyHandlers.discarding());
            System.exit(r.statusCode() == 200 ? 0 : 1);
        } catch (Exception e) {
            System.err.println("health check failed: " + e.getMessage());
            System.exit(1);
        }
    }
}
