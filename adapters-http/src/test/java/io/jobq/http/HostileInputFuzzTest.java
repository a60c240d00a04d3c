package io.jobq.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * Issue 11, item 3: every HTTP input gets 2xx or 4xx, never 5xx; every error body is the documented JSON
 * shape and at most 4 KiB; and no request costs memory out of proportion to its size.
 *
 * <p>{@link HostileRequests} generates thousands of whole requests against every route. Memory is
 * measured per request as the bytes the busiest thread allocated while it was served
 * ({@code ThreadMXBean#getThreadAllocatedBytes}; the server's handler threads are platform threads): a
 * 45-byte {@code "delay_seconds": 1e1000000000} used to allocate gigabytes to build its error message.
 *
 * <p>A request that breaks a rule is sent again {@value #REPLAYS} times: the rules are about input, so broken
 * input breaks them again, and only then is it a failure. One that keeps every rule on replay is printed as
 * a transient (in CI a single request got a 505, a closed connection, or once an answer whose status line
 * read {@code <something> HTTP/1.1}, that no replay of its seed or 140,000 more requests reproduced: the
 * client reports such an answer as no answer, with its first bytes, rather than failing on its parse); more
 * than {@value #MAX_TRANSIENTS} of those in a run fail the test too.
 *
 * <p>The seed is random per run and printed in every failure; {@code -Djobq.fuzz.seed=N} replays a run,
 * {@code -Djobq.fuzz.requests=N} changes its length (default 3,000).
 *
 * <p>{@link Isolated}: no other test class runs meanwhile, because the meter sees every thread of the
 * JVM, and another class's threads (a 1 MiB body of its own, a JIT-heavy first query) would be
 * counted against a request here.
 */
@Isolated("measures the allocation of every thread in the JVM")
class HostileInputFuzzTest extends ApiTestCase {
    static final long SEED = Long.getLong("jobq.fuzz.seed", new SecureRandom().nextLong());
    static final int REQUESTS = Integer.getInteger("jobq.fuzz.requests", 3000);
    /** Most one request may make a thread allocate; a 1 MiB body, parsed and stored, takes a few MiB. */
    static final long MAX_ALLOCATION_BYTES = 64L << 20;
    static final int MAX_ERROR_BODY_BYTES = 4096;
    static final Duration TIMEOUT = Duration.ofSeconds(15);
    /** How many more times a request that broke a rule is sent before it counts as a failure. */
    static final int REPLAYS = 3;
    /** Most requests per run that broke a rule once but kept every rule on replay. */
    static final int MAX_TRANSIENTS = 2;

    @Test
    void noGeneratedRequestGetsA5xxAnOversizedErrorOrOutsizedMemory() throws Exception {
        warmUp();
        HostileRequests requests = new HostileRequests(SEED);
        List<String> failures = new ArrayList<>();
        List<String> transients = new ArrayList<>();
        Map<Integer, Integer> statuses = new TreeMap<>();
        long mostAllocated = 0;
        for (int i = 0; i < REQUESTS; i++) {
            byte[] request = requests.next();
            Allocation meter = Allocation.start();
            ApiClient.Reply reply;
            String what;
            try {
                reply = f.client().raw(request, TIMEOUT);
                Busiest busiest = meter.busiest();
                mostAllocated = Math.max(mostAllocated, busiest.bytes());
                statuses.merge(reply.status(), 1, Integer::sum);
                Optional<String> broken = brokenRule(reply, busiest, startsWith(request, "HEAD "));
                if (broken.isEmpty()) continue;
                what = "#" + i + " " + broken.get() + " for " + HostileRequests.describe(request);
            } catch (UncheckedIOException e) {
                what = "#" + i + " no answer (" + e.getMessage() + ") to " + HostileRequests.describe(request);
            }
            // A rule about input holds for the same bytes every time: replay them. Broken again: a failure.
            // Answered well every time: a transport glitch (seen in CI, never reproduced), counted apart.
            Optional<String> again = replayBroken(request);
            if (again.isPresent()) failures.add(what + "; replayed: " + again.get());
            else transients.add(what);
        }
        transients.forEach(t -> System.out.println("transient, fine on replay: " + t));
        assertThat(transients).as("glitches that replays did not repeat: a few at most").hasSizeLessThanOrEqualTo(MAX_TRANSIENTS);
        String summary = "seed " + SEED + " (-Djobq.fuzz.seed=" + SEED + " replays it): " + failures.size() + " of " + REQUESTS
                + " requests broke a rule; statuses " + statuses + "; most one request allocated " + (mostAllocated >> 20) + " MiB";
        System.out.println(summary);
        assertThat(failures).as(summary).isEmpty();
    }

    /** Sends {@code request} {@value #REPLAYS} more times: the first broken rule, or empty if each answer kept them all. */
    private Optional<String> replayBroken(byte[] request) {
        for (int i = 0; i < REPLAYS; i++) {
            try {
                ApiClient.Reply reply = f.client().raw(request, TIMEOUT);
                Optional<String> broken = brokenRule(reply, new Busiest("replay", 0), startsWith(request, "HEAD "));
                if (broken.isPresent()) return broken;
            } catch (UncheckedIOException e) {
                return Optional.of("no answer (" + e.getMessage() + ")");
            }
        }
        return Optional.empty();
    }

    /** The worst numbers of the issue, all at once: each a quick 400 naming its field, with a small body. */
    @Test
    void aBurstOfHugeExponentsAnswers400NamingTheFieldWithoutGigabytes() throws Exception {
        warmUp();
        Map<String, String[]> cases = new LinkedHashMap<>();
        cases.put("delay_seconds", new String[] {"POST", "/jobs", "{\"task\": \"t\", \"delay_seconds\": 1e1000000000}"});
        cases.put("weight", new String[] {"PUT", "/tenants/acme", "{\"weight\": 1e1000000000}"});
        cases.put("payload", new String[] {"POST", "/jobs", "{\"task\": \"t\", \"payload\": {\"n\": 1e9999999999}}"});
        cases.put("max_attempts", new String[] {"POST", "/jobs/batch", "{\"task\": \"t\", \"payloads\": [1], \"max_attempts\": 1e2147483647}"});
        cases.put("payloads", new String[] {"POST", "/jobs/batch", "{\"task\": \"t\", \"payloads\": [-1e-2147483648]}"});
        List<Map.Entry<String, String[]>> burst = new ArrayList<>();
        for (int copy = 0; copy < 2; copy++) burst.addAll(cases.entrySet());
        Allocation meter = Allocation.start();
        List<Future<ApiClient.Reply>> replies = new ArrayList<>();
        try (ExecutorService pool = Executors.newFixedThreadPool(burst.size())) {
            for (Map.Entry<String, String[]> c : burst) {
                String[] req = c.getValue();
                byte[] body = req[2].getBytes(StandardCharsets.UTF_8);
                String head = req[0] + " " + req[1] + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
                        + body.length + "\r\nConnection: close\r\n\r\n";
                byte[] whole = (head + req[2]).getBytes(StandardCharsets.UTF_8);
                replies.add(pool.submit(() -> f.client().raw(whole, TIMEOUT)));
            }
            for (int i = 0; i < burst.size(); i++) {
                ApiClient.Reply r = replies.get(i).get();
                assertThat(r.status()).as(r.toString()).isEqualTo(400);
                assertThat(r.errorField()).as(r.toString()).isEqualTo(burst.get(i).getKey());
                assertThat(r.text().getBytes(StandardCharsets.UTF_8).length).as(r.toString()).isLessThanOrEqualTo(MAX_ERROR_BODY_BYTES);
            }
        }
        assertThat(meter.total()).as("bytes allocated by all threads during the burst").isLessThan(burst.size() * MAX_ALLOCATION_BYTES);
        assertThat(f.jobCount()).isZero();
    }

    /** Makes the server start its handler threads beforehand: the meter sees only threads alive at its start. */
    private void warmUp() throws Exception {
        try (ExecutorService pool = Executors.newFixedThreadPool(16)) {
            List<Future<ApiClient.Reply>> health = new ArrayList<>();
            for (int i = 0; i < 16; i++) health.add(pool.submit(() -> f.client().get("/health")));
            for (Future<ApiClient.Reply> h : health) assertThat(h.get().status()).isEqualTo(200);
        }
    }

    /** What every answer must satisfy, or why it does not. */
    static Optional<String> brokenRule(ApiClient.Reply reply, Busiest busiest, boolean head) {
        if (reply.status() >= 500) return Optional.of("answered " + excerpt(reply));
        if (busiest.bytes() > MAX_ALLOCATION_BYTES) {
            return Optional.of("made thread " + busiest.thread() + " allocate " + (busiest.bytes() >> 20) + " MiB, answering " + excerpt(reply));
        }
        if (reply.status() < 400 || head) return Optional.empty();
        int size = reply.text().getBytes(StandardCharsets.UTF_8).length;
        if (size > MAX_ERROR_BODY_BYTES) return Optional.of("sent a " + size + "-byte error body " + excerpt(reply));
        JsonNode json = reply.json();
        JsonNode error = json == null ? null : json.get("error");
        if (error == null || json.size() != 1 || !error.path("code").isTextual() || !error.path("message").isTextual()
                || (error.has("field") && !error.get("field").isTextual())
                || !Set.of("code", "message", "field").containsAll(iterable(error.fieldNames()))) {
            return Optional.of("sent an error that is not {\"error\": {code, message, field?}}: " + excerpt(reply));
        }
        return Optional.empty();
    }

    private static List<String> iterable(java.util.Iterator<String> it) {
        List<String> out = new ArrayList<>();
        it.forEachRemaining(out::add);
        return out;
    }

    private static String excerpt(ApiClient.Reply reply) {
        String s = reply.toString();
        return s.length() > 300 ? s.substring(0, 300) + "... (" + s.length() + " chars)" : s;
    }

    private static boolean startsWith(byte[] bytes, String prefix) {
        return new String(bytes, 0, Math.min(bytes.length, prefix.length()), StandardCharsets.ISO_8859_1).equals(prefix);
    }

    record Busiest(String thread, long bytes) {}

    /** Bytes allocated by each live platform thread since {@link #start}. */
    private record Allocation(long[] ids, long[] before) {
        private static final com.sun.management.ThreadMXBean THREADS = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

        static Allocation start() {
            long[] ids = THREADS.getAllThreadIds();
            return new Allocation(ids, THREADS.getThreadAllocatedBytes(ids));
        }

        /** The thread that allocated most since the start, and how much (threads started since are not seen). */
        Busiest busiest() {
            long[] now = THREADS.getThreadAllocatedBytes(ids);
            int most = -1;
            for (int i = 0; i < ids.length; i++) {
                if (now[i] >= 0 && before[i] >= 0 && (most < 0 || now[i] - before[i] > now[most] - before[most])) most = i;
            }
            if (most < 0) return new Busiest("none", 0);
            var info = THREADS.getThreadInfo(ids[most]);
            return new Busiest(info == null ? "ended" : info.getThreadName(), now[most] - before[most]);
        }

        /** What all threads together allocated since the start. */
        long total() {
            long[] now = THREADS.getThreadAllocatedBytes(ids);
            long sum = 0;
            for (int i = 0; i < ids.length; i++) if (now[i] >= 0 && before[i] >= 0) sum += now[i] - before[i];
            return sum;
        }
    }
}
