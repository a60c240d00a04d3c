package io.jobq.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.jobq.application.fake.Json;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.time.Duration;

/** A real HTTP client against a running {@link HttpApi}; bodies are sent as given, byte for byte. */
final class ApiClient {
    /** Reads answers as deep as the API accepts payloads (Jackson's default stops at 1,000 levels). */

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final int port;
    private final String base;
    /** Sent with every request but {@link #raw} ones, e.g. {@code Authorization}; null: none. */
    private final String authorization;

    ApiClient(int port) {
        this(port, null);
    }

    private ApiClient(int port, String authorization) {
        this.port = port;
        this.base = "http://127.0.0.1:" + port;
        this.authorization = authorization;
    }

    /** A client that sends {@code Authorization: Bearer <key>} with every request. */
    ApiClient withBearer(String key) {
        return new ApiClient(port, "Bearer " + key);
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
        return send(postRequest(path, body, contentType));
    }

    private HttpRequest.Builder postRequest(String path, byte[] body, String contentType) {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri(path)).POST(HttpRequest.BodyPublishers.ofByteArray(body));
        if (contentType != null) b.header("Content-Type", contentType);
        return b;
    }

    /**
     * POSTs {@code json} with {@code Expect: 100-continue} (as curl does for bodies over 1 MiB): the body goes
     * only once the server asks for it, so a refusal made from the headers alone (a Content-Length over the
     * limit) reaches the client instead of racing the upload it cut short (CI saw the connection closed under
     * a body still being written, and no reply).
     */
    Reply postAnnounced(String path, String json) {
        return send(postRequest(path, json.getBytes(StandardCharsets.UTF_8), "application/json").expectContinue(true));
    }

    Reply put(String path, String json) {
        return send(HttpRequest.newBuilder(uri(path)).header("Content-Type", "application/json")
                .PUT(HttpRequest.BodyPublishers.ofString(json)));
    }

    Reply method(String method, String path) {
        return send(HttpRequest.newBuilder(uri(path)).method(method, HttpRequest.BodyPublishers.noBody()));
    }

    /** GET of a request target sent as written, even one {@link java.net.URI} refuses (e.g. {@code /jobs?limit=%zz}). */
    Reply rawGet(String target) {
        String request = "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
        return raw(request.getBytes(StandardCharsets.UTF_8), Duration.ofSeconds(30));
    }

    /**
     * Sends {@code request} byte for byte on a fresh connection (so the request line, headers and body
     * may be anything, including what {@link HttpClient} refuses to send) and reads the answer until the
     * server closes. The request should say {@code Connection: close}; chunked answers are decoded.
     *
     * @param timeout how long to wait for the whole answer
     * @throws UncheckedIOException also when the server sends no status line before the timeout
     */
    Reply raw(byte[] request, Duration timeout) {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout((int) timeout.toMillis());
            try {
                socket.getOutputStream().write(request);
                socket.getOutputStream().flush();
            } catch (IOException e) {
                // the server may answer (413, 400) and close before it has read the whole request
            }
            return parseRaw(socket.getInputStream().readAllBytes());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Status line, headers and body (de-chunked) of one HTTP/1.1 answer. */
    private static Reply parseRaw(byte[] answer) throws IOException {
        String all = new String(answer, StandardCharsets.ISO_8859_1);
        int headEnd = all.indexOf("\r\n\r\n");
        if (headEnd < 0) throw new IOException("no complete answer: " + all.length() + " bytes");
        String[] lines = all.substring(0, headEnd).split("\r\n");
        int status = statusCode(lines[0], all);
        Map<String, List<String>> headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
        for (int i = 1; i < lines.length; i++) {
            int colon = lines[i].indexOf(':');
            if (colon < 0) throw new IOException("a header line without a colon: " + lines[i]);
            headers.computeIfAbsent(lines[i].substring(0, colon).trim(), k -> new ArrayList<>()).add(lines[i].substring(colon + 1).trim());
        }
        byte[] body = Arrays.copyOfRange(answer, headEnd + 4, answer.length);
        if (headers.getOrDefault("Transfer-Encoding", List.of()).contains("chunked")) {
            try {
                body = dechunk(body);
            } catch (RuntimeException e) { // a size that is not hex, or a chunk past the end
                throw new IOException("a malformed chunked body: " + e, e);
            }
        }
        String text = new String(body, StandardCharsets.UTF_8);
        JsonNode json = null;
        if (headers.getOrDefault("Content-Type", List.of("")).getFirst().startsWith("application/json")) {
            try {
                json = Json.MAPPER.readTree(body);
            } catch (IOException notJson) {
                json = null; // the caller sees a JSON content type with a null json
            }
        }
        return new Reply(status, java.net.http.HttpHeaders.of(headers, (k, v) -> true), text, json);
    }

    /**
     * The status code of {@code statusLine} ({@code HTTP/1.1 400 Bad Request}).
     *
     * @throws IOException naming the first bytes of {@code answer} when the line is not a status line, so a
     *     malformed answer is reported (and replayed) by the caller like a missing one, never a parse error
     */
    private static int statusCode(String statusLine, String answer) throws IOException {
        String[] parts = statusLine.split(" ", 3);
        if (parts.length >= 2 && parts[0].startsWith("HTTP/") && parts[1].matches("[1-5][0-9][0-9]")) return Integer.parseInt(parts[1]);
        String start = answer.substring(0, Math.min(answer.length(), 200)).replace("\r", "\\r").replace("\n", "\\n");
        throw new IOException("not an HTTP status line; the answer began: " + start);
    }

    private static byte[] dechunk(byte[] chunked) throws IOException {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        int i = 0;
        while (true) {
            int lineEnd = indexOf(chunked, i);
            if (lineEnd < 0) throw new IOException("truncated chunked body");
            int size = Integer.parseInt(new String(chunked, i, lineEnd - i, StandardCharsets.ISO_8859_1).split(";")[0].trim(), 16);
            if (size == 0) return out.toByteArray();
            out.write(chunked, lineEnd + 2, size);
            i = lineEnd + 2 + size + 2;
        }
    }

    private static int indexOf(byte[] b, int from) {
        for (int i = from; i + 1 < b.length; i++) if (b[i] == '\r' && b[i + 1] == '\n') return i;
        return -1;
    }

    private URI uri(String path) {
        return URI.create(base + path);
    }

    private Reply send(HttpRequest.Builder b) {
        if (authorization != null) b.header("Authorization", authorization);
        try {
            HttpResponse<String> r = http.send(b.timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
            JsonNode json = null;
            if (r.headers().firstValue("Content-Type").orElse("").startsWith("application/json")) json = Json.MAPPER.readTree(r.body());
            return new Reply(r.statusCode(), r.headers(), r.body(), json);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
