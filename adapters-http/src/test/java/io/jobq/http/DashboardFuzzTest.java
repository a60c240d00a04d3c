package io.jobq.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The dashboard's doors fuzzed: generated request lines, query strings and form bodies against every {@code /ui}
 * route get a page (2xx, 3xx or 4xx), never a 5xx, and nothing a request sends comes back unescaped. The seed is
 * random per run and printed with any failure; {@code -Djobq.fuzz.seed=N} replays it.
 */
class DashboardFuzzTest extends ApiTestCase {
    static final long SEED = Long.getLong("jobq.fuzz.seed", new SecureRandom().nextLong());
    static final int REQUESTS = 1_500;
    static final String MARK = "<x7q>";
    static final String[] PATHS = {"/ui", "/ui/jobs", "/ui/jobs/1", "/ui/jobs/%s", "/ui/jobs/%s/retry", "/ui/jobs/%s/cancel",
        "/ui/login", "/ui/logout", "/ui/style.css", "/ui/%s"};
    static final String[] PARAMS = {"tenant", "queue", "task", "status", "after", "refresh", "done", "next", "key", "limit", "x"};
    static final String[] VALUES = {"", "acme", "dead", "on", "retried", "cancel", "-1", "0", "1", "9223372036854775807",
        "9223372036854775808", "1e9", "%00", "%zz", "%", "%E2%80%AE", "%F0%9F%92%A9", "a%20b", MARK, "%3Cx7q%3E", "%22%3E%3Cx7q%3E",
        "..%2F..%2Fetc", "//evil.example", "a".repeat(129), "b".repeat(5_000), "%C0%AF", "%ED%A0%80", "+", "=", "&", "null"};

    @Test
    void everyGeneratedRequestGetsAPageNeverA5xxAndNoMarkupComesBack() {
        long id = f.client().post("/jobs", j("{'task': 't', 'tenant': 'acme'}")).json().get("id").asLong();
        Random random = new Random(SEED);
        List<String> failures = new ArrayList<>();
        Map<Integer, Integer> statuses = new TreeMap<>();
        for (int i = 0; i < REQUESTS; i++) {
            String target = String.format(PATHS[random.nextInt(PATHS.length)], random.nextBoolean() ? id : pick(random)) + query(random);
            boolean post = random.nextInt(3) == 0;
            String body = post ? query(random).replaceFirst("^\\?", "") : "";
            String request = (post ? "POST " : "GET ") + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                    + (post ? "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: "
                    + body.getBytes(StandardCharsets.UTF_8).length + "\r\n" : "") + "\r\n" + body;
            ApiClient.Reply r = f.client().raw(request.getBytes(StandardCharsets.UTF_8), Duration.ofSeconds(15));
            statuses.merge(r.status(), 1, Integer::sum);
            if (r.status() >= 500 || r.status() < 200) failures.add(r.status() + " for " + excerpt(request));
            else if (r.text().contains(MARK)) failures.add("unescaped markup in the answer to " + excerpt(request));
        }
        String summary = "seed " + SEED + " (-Djobq.fuzz.seed=" + SEED + "): statuses " + statuses;
        System.out.println(summary);
        assertThat(failures).as(summary).isEmpty();
        assertThat(statuses.keySet()).as("the run reached pages, redirects and refusals").contains(200, 303, 400);
    }

    private static String query(Random random) {
        StringBuilder q = new StringBuilder();
        int n = random.nextInt(5);
        for (int i = 0; i < n; i++) q.append(i == 0 ? '?' : '&').append(PARAMS[random.nextInt(PARAMS.length)]).append('=').append(pick(random));
        return q.toString();
    }

    private static String pick(Random random) {
        return VALUES[random.nextInt(VALUES.length)];
    }

    private static String excerpt(String request) {
        String line = request.substring(0, request.indexOf('\r'));
        return line.length() > 200 ? line.substring(0, 200) + "…" : line;
    }
}
