package io.jobq.http;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Generates whole HTTP/1.1 requests (request line, headers, body) against every route of the API, as
 * a hostile client would write them: numbers with huge or negative exponents, NaN and Infinity, deep
 * nesting, huge strings, wrong types, duplicate keys, invalid UTF-8, odd ids, query strings and
 * content types, truncated and trailing garbage. Mostly near-valid, so the checks behind the parser
 * are reached too. Deterministic for a seed: the same seed gives the same requests.
 */
final class HostileRequests {
    private static final String[] FIELDS_JOB = {"task", "payload", "tenant", "queue", "idempotency_key", "max_attempts", "delay_seconds", "run_at", "priority"};
    private static final String[] FIELDS_BATCH = {"task", "payloads", "tenant", "queue", "max_attempts", "delay_seconds", "priority"};
    private static final String[] FIELDS_WEIGHT = {"weight", "queue", "max_running"};
    private static final String[] FIELDS_QUEUE = {"fairness", "retention"};
    private static final String[] FIELDS_SCHEDULE = {"cron", "task", "payload", "tenant", "queue", "timezone", "max_attempts"};
    private static final String[] QUERY_PARAMS = {"tenant", "queue", "status", "limit", "after"};
    private static final String[] EXPONENTS = {"0", "1", "5", "-7", "308", "309", "-324", "400", "-400", "999", "1000", "1001",
            "-1000", "-1001", "16383", "-16384", "131071", "131072", "-131072", "999999999", "1000000000", "-1000000000",
            "1000000001", "2147483647", "-2147483647", "2147483648", "-2147483648", "9999999999", "-9999999999",
            "99999999999999999999", "-99999999999999999999", "0000000000000000000001"};
    private static final String[] MANTISSAS = {"0", "-0", "1", "-1", "0.5", "-0.0", "123456789", "1.7976931348623157",
            "4.9", "0.000001", "1000000", "31536000", "31536000.0001", "100", "101", "500", "501", "9223372036854775807",
            "9223372036854775808", "-9223372036854775809"};
    private static final String[] BROKEN_NUMBERS = {"NaN", "-NaN", "Infinity", "-Infinity", "+Infinity", "inf", "+1", "01",
            ".5", "1.", "-", "1e", "1e+", "0x10", "1_000", "--1", "1.2.3", "1ee5", "\u0661"};
    private static final String[] IDS = {"1", "2", "0", "-1", "+5", "00001", "1.5", "1e3", "abc", "%00", "%ff", "%2F", "%20",
            "9223372036854775807", "9223372036854775808", "99999999999999999999", "0x1", "%d9%a1", "1%00", "%", "%zz"};
    private static final String[] CONTENT_TYPES = {null, "application/json; charset=utf-8", "application/json; charset=latin1",
            "text/plain", "application/vnd.jobq+json", "application/json;charset=", "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x", ";;;", "application/json; charset=\"UTF-8\"", "*/*", "application/json; charset",
            "APPLICATION/JSON", "application/json\u0001", "application/json; charset=utf-8; charset=utf-16"};

    private final Random r;

    HostileRequests(long seed) {
        this.r = new Random(seed);
    }

    /** The next request, complete, ending with {@code Connection: close}. */
    byte[] next() {
        int kind = r.nextInt(100);
        if (kind < 28) return withBody("POST", "/jobs", body(FIELDS_JOB));
        if (kind < 43) return withBody("POST", "/jobs/batch", body(FIELDS_BATCH));
        if (kind < 54) return withBody("PUT", "/tenants/" + pathSegment(), body(FIELDS_WEIGHT));
        if (kind < 56) return withBody("PUT", "/queues/" + pathSegment(), body(FIELDS_QUEUE));
        if (kind < 58) return withBody("PUT", "/schedules/" + pathSegment(), body(FIELDS_SCHEDULE));
        if (kind < 73) return bodiless("GET", "/jobs" + query());
        if (kind < 80) return bodiless("GET", "/jobs/" + id());
        if (kind < 86) return withBody("POST", "/jobs/" + id() + "/retry", r.nextInt(4) == 0 ? body(FIELDS_JOB) : new byte[0]);
        if (kind < 92) return bodiless(pick("GET", "GET", "GET", "HEAD", "DELETE", "POST"), pick("/stats", "/metrics", "/health", "/schedules", "/schedules/" + pathSegment()) + (r.nextBoolean() ? "" : query()));
        // anything else: odd methods, paths and request targets
        String method = pick("GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "FOO", "get");
        String path = pick("/", "/jobs/", "//jobs", "/jobs/1/retry/x", "/tenants", "/tenants/", "/tenants/a/b", "/jobs/%2e%2e/stats",
                "/%00", "/jobs/..%2f", "/" + "a".repeat(r.nextInt(20_000)), "/jobs?" + "x".repeat(r.nextInt(20_000)), "*",
                "http://127.0.0.1/jobs", "/jobs#frag", "/jobs/\u00e9");
        return r.nextBoolean() ? bodiless(method, path) : withBody(method, path, body(pickArray(FIELDS_JOB, FIELDS_BATCH, FIELDS_WEIGHT)));
    }

    /** A printable excerpt of a request, for failure messages. */
    static String describe(byte[] request) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < Math.min(request.length, 400); i++) {
            int b = request[i] & 0xff;
            if (b >= 0x20 && b < 0x7f) out.append((char) b);
            else if (b == '\n') out.append("\\n");
            else if (b != '\r') out.append(String.format("\\x%02x", b));
        }
        return request.length > 400 ? out + "... (" + request.length + " bytes)" : out.toString();
    }

    private byte[] bodiless(String method, String target) {
        return request(method, target, null, r.nextInt(10) == 0 ? body(FIELDS_JOB) : new byte[0], r.nextInt(10) == 0);
    }

    private byte[] withBody(String method, String target, byte[] body) {
        String type = r.nextInt(100) < 85 ? "application/json" : CONTENT_TYPES[r.nextInt(CONTENT_TYPES.length)];
        return request(method, target, type, body, false);
    }

    private byte[] request(String method, String target, String contentType, byte[] body, boolean lyingLength) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        StringBuilder head = new StringBuilder(method).append(' ').append(target).append(" HTTP/1.1\r\nHost: 127.0.0.1\r\n");
        if (contentType != null) head.append("Content-Type: ").append(contentType).append("\r\n");
        // a Content-Length smaller than the body (never larger: the server would wait for bytes that never come)
        long length = lyingLength && body.length > 0 ? r.nextInt(body.length) : body.length;
        if (body.length > 0 || r.nextBoolean()) head.append("Content-Length: ").append(length).append("\r\n");
        head.append("Connection: close\r\n\r\n");
        out.writeBytes(head.toString().getBytes(StandardCharsets.UTF_8));
        out.write(body, 0, (int) length);
        return out.toByteArray();
    }

    // ------------------------------------------------------------------ bodies

    private byte[] body(String[] fields) {
        int shape = r.nextInt(100);
        if (shape < 80) return mutate(object(fields));
        if (shape < 84) return utf8(nested(pickInt(999, 1000, 1001, 1002, 5000, 100_000)));
        if (shape < 88) return utf8(value(3));
        if (shape < 90) return new byte[0];
        if (shape < 93) return utf8("[" + object(fields) + "]");
        if (shape < 96) return utf8(object(fields) + pick(" {}", " x", ",", "\u0000", " ]", "}"));
        return utf8(number());
    }

    /** A JSON object of some of {@code fields} (and maybe an unknown or duplicate one), as text. */
    private String object(String[] fields) {
        List<String> members = new ArrayList<>();
        for (String f : fields) {
            if (r.nextInt(100) < 65) members.add(member(f, fieldValue(f)));
        }
        if (r.nextInt(12) == 0) members.add(member(pick("max_attemps", "", "Task", "payload\u0000", "x".repeat(r.nextInt(70_000)), "\\ud800"), value(1)));
        if (r.nextInt(15) == 0 && !members.isEmpty()) members.add(members.get(r.nextInt(members.size())));
        java.util.Collections.shuffle(members, r);
        return "{" + String.join(",", members) + "}";
    }

    private String member(String name, String value) {
        return "\"" + name + "\":" + value;
    }

    private String fieldValue(String field) {
        if (r.nextInt(100) < 25) return value(2); // the wrong type as often as not
        return switch (field) {
            case "task", "tenant", "queue" -> string(r.nextInt(4) == 0 ? hostileText() : identifier());
            case "idempotency_key" -> string(r.nextInt(3) == 0 ? hostileText() : identifier());
            case "payload" -> value(4);
            case "payloads" -> {
                int n = pickInt(0, 1, 2, 3, 10, 1000, 1001);
                List<String> items = new ArrayList<>();
                for (int i = 0; i < n; i++) items.add(n > 10 ? pick("1", "{}", number()) : value(3));
                yield "[" + String.join(",", items) + "]";
            }
            case "retention" -> r.nextBoolean() ? value(3) : "{\"done\":" + number() + ",\"dead\":" + number() + "}";
            case "fairness" -> string(r.nextInt(3) == 0 ? hostileText() : pick("work", "jobs", "WORK", "time", ""));
            case "max_attempts" -> r.nextBoolean() ? Integer.toString(r.nextInt(-5, 110)) : number();
            case "run_at" -> string(r.nextInt(3) == 0 ? hostileText()
                    : pick("2030-01-01T00:00:00Z", "2001-01-01T00:00:00+01:00", "+999999999-12-31T23:59:59Z", "2030-02-30T00:00:00Z"));
            default -> number(); // delay_seconds, weight
        };
    }

    /** Any JSON value, possibly broken. */
    private String value(int depth) {
        int k = r.nextInt(100);
        if (k < 35) return number();
        if (k < 60) return string(r.nextInt(3) == 0 ? hostileText() : identifier());
        if (k < 66) return pick("true", "false", "null", "nul", "True", "undefined");
        if (depth <= 0) return "1";
        if (k < 83) {
            List<String> items = new ArrayList<>();
            for (int i = r.nextInt(5); i > 0; i--) items.add(value(depth - 1));
            return "[" + String.join(",", items) + "]";
        }
        if (k < 97) {
            List<String> members = new ArrayList<>();
            for (int i = r.nextInt(5); i > 0; i--) members.add(member(r.nextInt(4) == 0 ? hostileText() : identifier(), value(depth - 1)));
            return "{" + String.join(",", members) + "}";
        }
        return nested(pickInt(10, 999, 1001, 3000));
    }

    private String nested(int depth) {
        boolean arrays = r.nextBoolean();
        String open = arrays ? "[" : "{\"a\":";
        String close = arrays ? "]" : "}";
        return open.repeat(depth) + number() + close.repeat(depth);
    }

    /** A JSON number literal: ordinary, huge, tiny, with exponents in and far out of int range, or not a number at all. */
    private String number() {
        int k = r.nextInt(100);
        if (k < 5) return BROKEN_NUMBERS[r.nextInt(BROKEN_NUMBERS.length)];
        if (k < 15) return Long.toString(r.nextLong());
        if (k < 20) return (r.nextBoolean() ? "-" : "") + "9".repeat(pickInt(19, 20, 400, 999, 1000, 1001, 5000));
        if (k < 25) return "0." + "0".repeat(pickInt(5, 998, 999, 1500)) + "1";
        String mantissa = MANTISSAS[r.nextInt(MANTISSAS.length)];
        if (k < 40) return mantissa;
        String exponent = EXPONENTS[r.nextInt(EXPONENTS.length)];
        if (r.nextInt(4) == 0 && !exponent.startsWith("-")) exponent = "+" + exponent;
        return mantissa + (r.nextBoolean() ? "e" : "E") + exponent;
    }

    private String identifier() {
        String alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:-";
        int n = pickInt(1, 3, 8, 128, 129);
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < n; i++) s.append(alphabet.charAt(r.nextInt(alphabet.length())));
        return s.toString();
    }

    /** Text that is awkward somewhere: escapes PostgreSQL refuses, raw control characters, huge, quotes, non-ASCII. */
    private String hostileText() {
        return switch (r.nextInt(14)) {
            case 0 -> "";
            case 1 -> "a\\u0000b";
            case 2 -> "\\ud800";
            case 3 -> "\\udc00\\ud800";
            case 4 -> "caf\u00e9 \uD83D\uDE00";
            case 5 -> "x".repeat(r.nextInt(300));
            case 6 -> "y".repeat(r.nextInt(100_000));
            case 7 -> r.nextInt(20) == 0 ? "z".repeat(900_000) : "z".repeat(5000);
            case 8 -> "\\\"quoted\\\" \\\\ back";
            case 9 -> "raw\u0001control";
            case 10 -> "bad escape \\x41 \\u00";
            case 11 -> "\\u0000".repeat(r.nextInt(1, 2000));
            case 12 -> "a b/c?d&e=f%00";
            default -> "\u202e\u0000\ufffe\uffff";
        };
    }

    private static String string(String content) {
        return "\"" + content + "\"";
    }

    /** Breaks valid-looking bodies in ways a parser meets: cut short, invalid UTF-8 bytes spliced in. */
    private byte[] mutate(String json) {
        byte[] bytes = utf8(json);
        int k = r.nextInt(100);
        if (k < 88 || bytes.length == 0) return bytes;
        int at = r.nextInt(bytes.length);
        if (k < 93) return java.util.Arrays.copyOf(bytes, at);
        byte[][] bad = {{(byte) 0xff}, {(byte) 0x80}, {(byte) 0xe2, (byte) 0x82}, {(byte) 0xc0, (byte) 0x80},
                {(byte) 0xed, (byte) 0xa0, (byte) 0x80}, {(byte) 0xf4, (byte) 0x90, (byte) 0x80, (byte) 0x80}};
        byte[] insert = bad[r.nextInt(bad.length)];
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(bytes, 0, at);
        out.writeBytes(insert);
        out.write(bytes, at, bytes.length - at);
        return out.toByteArray();
    }

    // ------------------------------------------------------------------ paths and queries

    private String id() {
        return r.nextInt(10) == 0 ? Long.toString(r.nextLong()) : IDS[r.nextInt(IDS.length)];
    }

    private String pathSegment() {
        return switch (r.nextInt(8)) {
            case 0 -> "acme%20corp";
            case 1 -> "a!b";
            case 2 -> "t".repeat(pickInt(128, 129, 5000));
            case 3 -> "%00";
            case 4 -> "%ff%fe";
            case 5 -> "";
            default -> identifier();
        };
    }

    private String query() {
        if (r.nextInt(20) == 0) return "?" + pick("&&&", "=", "limit", "limit=%zz", "%", "a=%ff", "limit=1&limit=2", "?", "after=%00");
        List<String> pairs = new ArrayList<>();
        for (int i = r.nextInt(5); i > 0; i--) {
            String name = r.nextInt(10) == 0 ? pick("tenatn", "LIMIT", "x", "", "%00", "limit[]") : QUERY_PARAMS[r.nextInt(QUERY_PARAMS.length)];
            String value = switch (name) {
                case "status" -> pick("queued", "dead", "failed", "QUEUED", "", "%00");
                case "limit", "after" -> r.nextBoolean() ? Integer.toString(r.nextInt(-2, 600)) : pick(id(), number().replace("+", "%2B"));
                default -> r.nextBoolean() ? identifier() : pick("", "a%20b", "%ff", "%00", "t".repeat(129), "a+b", "%E2%82%AC");
            };
            pairs.add(r.nextInt(15) == 0 ? name : name + "=" + value);
        }
        return pairs.isEmpty() ? "" : "?" + String.join("&", pairs);
    }

    // ------------------------------------------------------------------ helpers

    @SafeVarargs
    private <T> T pick(T... choices) {
        return choices[r.nextInt(choices.length)];
    }

    private int pickInt(int... choices) {
        return choices[r.nextInt(choices.length)];
    }

    private String[] pickArray(String[]... choices) {
        return choices[r.nextInt(choices.length)];
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
