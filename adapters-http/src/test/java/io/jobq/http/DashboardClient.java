package io.jobq.http;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * What a browser sends to the dashboard, without a browser: GETs and form posts carrying the login cookie and,
 * for posts, an {@code Origin}; redirects are not followed, so tests see them.
 */
final class DashboardClient {
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    final String origin;
    /** {@code jobq_key=…}, or null before logging in. */
    private final String cookie;

    DashboardClient(int port) {
        this("http://127.0.0.1:" + port, null);
    }

    private DashboardClient(String origin, String cookie) {
        this.origin = origin;
        this.cookie = cookie;
    }

    record Page(int status, HttpResponse<String> response) {
        String body() {
            return response.body();
        }

        String header(String name) {
            return response.headers().firstValue(name).orElse(null);
        }
    }

    /** Posts the login form; on success, a client carrying the cookie the server set. */
    DashboardClient login(String key) {
        Page p = post("/ui/login", "key=" + java.net.URLEncoder.encode(key, java.nio.charset.StandardCharsets.UTF_8), origin);
        if (p.status() != 303) throw new AssertionError("login refused: " + p.status() + " " + p.body());
        String set = p.header("Set-Cookie");
        return new DashboardClient(origin, set.substring(0, set.indexOf(';')));
    }

    Page get(String path) {
        return send(HttpRequest.newBuilder(URI.create(origin + path)).GET());
    }

    /** A form post as a page of {@code from} (an origin, or null for none) would send it. */
    Page post(String path, String form, String from) {
        return post(path, form, from, null);
    }

    /** As {@link #post(String, String, String)}, through a proxy that sets {@code X-Forwarded-Host} (null: none). */
    Page post(String path, String form, String from, String forwardedHost) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(origin + path))
                .header("Content-Type", "application/x-www-form-urlencoded").POST(HttpRequest.BodyPublishers.ofString(form));
        if (from != null) b.header("Origin", from);
        if (forwardedHost != null) b.header("X-Forwarded-Host", forwardedHost);
        return send(b);
    }

    private Page send(HttpRequest.Builder b) {
        if (cookie != null) b.header("Cookie", cookie);
        try {
            HttpResponse<String> r = http.send(b.timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
            return new Page(r.statusCode(), r);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
