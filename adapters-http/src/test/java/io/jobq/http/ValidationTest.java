package io.jobq.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every validation rule of the API: each bad request gets its status, error code and field, and
 * writes nothing. Bodies are written with ' for " to keep the tables readable; {@code \\u0000} in
 * them is the JSON escape, sent as six characters.
 */
class ValidationTest extends ApiTestCase {
    static String repeat(char c, int n) {
        return String.valueOf(c).repeat(n);
    }

    static Stream<Arguments> badJobs() {
        return Stream.of(
                // task
                arguments("task missing", j("{}"), "missing_field", "task"),
                arguments("task null", j("{'task': null}"), "missing_field", "task"),
                arguments("task a number", j("{'task': 5}"), "invalid_field", "task"),
                arguments("task empty", j("{'task': ''}"), "invalid_field", "task"),
                arguments("task with a space", j("{'task': 'word count'}"), "invalid_field", "task"),
                arguments("task 129 chars", j("{'task': '" + repeat('a', 129) + "'}"), "invalid_field", "task"),
                arguments("task with NUL", j("{'task': 'a\\u0000'}"), "invalid_field", "task"),
                // tenant, queue
                arguments("tenant with a slash", j("{'task': 't', 'tenant': 'a/b'}"), "invalid_field", "tenant"),
                arguments("tenant with NUL", j("{'task': 't', 'tenant': 'acme\\u0000'}"), "invalid_field", "tenant"),
                arguments("tenant a number", j("{'task': 't', 'tenant': 7}"), "invalid_field", "tenant"),
                arguments("queue empty", j("{'task': 't', 'queue': ''}"), "invalid_field", "queue"),
                arguments("queue with NUL", j("{'task': 't', 'queue': '\\u0000'}"), "invalid_field", "queue"),
                arguments("queue non-ASCII", j("{'task': 't', 'queue': 'caf\u00e9'}"), "invalid_field", "queue"),
                // idempotency_key
                arguments("key empty", j("{'task': 't', 'idempotency_key': ''}"), "invalid_field", "idempotency_key"),
                arguments("key 256 chars", j("{'task': 't', 'idempotency_key': '" + repeat('k', 256) + "'}"), "invalid_field", "idempotency_key"),
                arguments("key a number", j("{'task': 't', 'idempotency_key': 5}"), "invalid_field", "idempotency_key"),
                arguments("key with NUL", j("{'task': 't', 'idempotency_key': 'k\\u0000'}"), "invalid_field", "idempotency_key"),
                arguments("key lone surrogate", j("{'task': 't', 'idempotency_key': '\\ud800'}"), "invalid_field", "idempotency_key"),
                // priority
                arguments("priority 10", j("{'task': 't', 'priority': 10}"), "invalid_field", "priority"),
                arguments("priority -1", j("{'task': 't', 'priority': -1}"), "invalid_field", "priority"),
                arguments("priority 1.5", j("{'task': 't', 'priority': 1.5}"), "invalid_field", "priority"),
                arguments("priority '3'", j("{'task': 't', 'priority': '3'}"), "invalid_field", "priority"),
                arguments("priority 1e400", j("{'task': 't', 'priority': 1e400}"), "invalid_field", "priority"),
                // max_attempts
                arguments("max_attempts 1.5", j("{'task': 't', 'max_attempts': 1.5}"), "invalid_field", "max_attempts"),
                arguments("max_attempts 3.0", j("{'task': 't', 'max_attempts': 3.0}"), "invalid_field", "max_attempts"),
                arguments("max_attempts '3'", j("{'task': 't', 'max_attempts': '3'}"), "invalid_field", "max_attempts"),
                arguments("max_attempts true", j("{'task': 't', 'max_attempts': true}"), "invalid_field", "max_attempts"),
                arguments("max_attempts 0", j("{'task': 't', 'max_attempts': 0}"), "invalid_field", "max_attempts"),
                arguments("max_attempts 101", j("{'task': 't', 'max_attempts': 101}"), "invalid_field", "max_attempts"),
                arguments("max_attempts 2^40", j("{'task': 't', 'max_attempts': 1099511627776}"), "invalid_field", "max_attempts"),
                // delay_seconds
                arguments("delay negative", j("{'task': 't', 'delay_seconds': -1}"), "invalid_field", "delay_seconds"),
                arguments("delay over a year", j("{'task': 't', 'delay_seconds': 31536000.5}"), "invalid_field", "delay_seconds"),
                arguments("run_at and delay", j("{'task': 't', 'delay_seconds': 1, 'run_at': '2030-01-01T00:00:00Z'}"), "invalid_field", "run_at"),
                arguments("run_at without offset", j("{'task': 't', 'run_at': '2030-01-01T00:00:00'}"), "invalid_field", "run_at"),
                arguments("run_at a date", j("{'task': 't', 'run_at': '2030-01-01'}"), "invalid_field", "run_at"),
                arguments("run_at epoch number", j("{'task': 't', 'run_at': 1893456000}"), "invalid_field", "run_at"),
                arguments("run_at garbage", j("{'task': 't', 'run_at': 'tomorrow'}"), "invalid_field", "run_at"),
                arguments("run_at over a year", j("{'task': 't', 'run_at': '+999999999-12-31T23:59:59Z'}"), "invalid_field", "run_at"),
                arguments("run_at empty", j("{'task': 't', 'run_at': ''}"), "invalid_field", "run_at"),
                arguments("delay a string", j("{'task': 't', 'delay_seconds': '10'}"), "invalid_field", "delay_seconds"),
                arguments("delay a boolean", j("{'task': 't', 'delay_seconds': false}"), "invalid_field", "delay_seconds"),
                // numbers whose exponent is out of int range, or that would print as a gigabyte (issue 11)
                arguments("delay 1e2147483647", j("{'task': 't', 'delay_seconds': 1e2147483647}"), "invalid_field", "delay_seconds"),
                arguments("delay 1e1000000000", j("{'task': 't', 'delay_seconds': 1e1000000000}"), "invalid_field", "delay_seconds"),
                arguments("delay -1e-2147483648", j("{'task': 't', 'delay_seconds': -1e-2147483648}"), "invalid_field", "delay_seconds"),
                arguments("delay Infinity", j("{'task': 't', 'delay_seconds': Infinity}"), "malformed_json", "delay_seconds"),
                arguments("max_attempts 1e9999999999", j("{'task': 't', 'max_attempts': 1e9999999999}"), "invalid_field", "max_attempts"),
                arguments("max_attempts 1e2", j("{'task': 't', 'max_attempts': 1e2}"), "invalid_field", "max_attempts"),
                arguments("payload 1e9999999999", j("{'task': 't', 'payload': {'n': 1e9999999999}}"), "invalid_field", "payload"),
                arguments("payload 0e9999999999", j("{'task': 't', 'payload': [0e9999999999]}"), "invalid_field", "payload"),
                arguments("payload 1e1000 (1,001 digits)", j("{'task': 't', 'payload': [1e1000]}"), "invalid_field", "payload"),
                arguments("payload number of 1,001 characters", "{\"task\": \"t\", \"payload\": " + repeat('9', 1001) + "}", "invalid_field", "payload"),
                arguments("payload nested 1,001 deep", "{\"task\": \"t\", \"payload\": " + repeat('[', 1001) + repeat(']', 1001) + "}", "invalid_field", "payload"),
                arguments("body nested 1,003 deep", "{\"task\": \"t\", \"payload\": " + repeat('[', 1002) + repeat(']', 1002) + "}", "invalid_field", "payload"),
                // unknown fields
                arguments("typo max_attemps", j("{'task': 't', 'max_attemps': 3}"), "unknown_field", "max_attemps"),
                arguments("payloads on a single job", j("{'task': 't', 'payloads': []}"), "unknown_field", "payloads"),
                // payload (R05)
                arguments("NUL in a payload string", j("{'task': 't', 'payload': {'text': 'a\\u0000b'}}"), "invalid_field", "payload"),
                arguments("NUL in a payload key", j("{'task': 't', 'payload': {'a\\u0000': 1}}"), "invalid_field", "payload"),
                arguments("NUL deep in a nested array", j("{'task': 't', 'payload': {'a': [1, [2, {'b': ['ok', '\\u0000']}]]}}"), "invalid_field", "payload"),
                arguments("NUL as the whole payload", j("{'task': 't', 'payload': '\\u0000'}"), "invalid_field", "payload"),
                arguments("lone high surrogate", j("{'task': 't', 'payload': {'s': '\\ud800'}}"), "invalid_field", "payload"),
                arguments("lone low surrogate", j("{'task': 't', 'payload': ['x\\udc00y']}"), "invalid_field", "payload"),
                arguments("reversed surrogate pair", j("{'task': 't', 'payload': ['\\udc00\\ud800']}"), "invalid_field", "payload"),
                arguments("lone surrogate in a key", j("{'task': 't', 'payload': {'\\ud800': true}}"), "invalid_field", "payload"),
                arguments("number beyond numeric", j("{'task': 't', 'payload': {'n': 1e-20000}}"), "invalid_field", "payload"),
                // stored compactly, but rendered back as 1.3 MB of digits (10,000 copies: past PostgreSQL's 1 GB)
                arguments("numbers that render too long", "{\"task\": \"t\", \"payload\": [" + "1e131071,".repeat(9) + "1e131071]}",
                        "invalid_field", "payload"),
                // body shape
                arguments("not JSON", "task=t", "malformed_json", null),
                arguments("truncated", j("{'task': 't'"), "malformed_json", "task"),
                arguments("trailing tokens", j("{'task': 't'} {}"), "malformed_json", null),
                arguments("an array", j("[{'task': 't'}]"), "not_an_object", null),
                arguments("a string", j("'t'"), "not_an_object", null),
                arguments("null", "null", "not_an_object", null),
                arguments("empty body", "", "malformed_json", null),
                arguments("duplicate key", j("{'task': 't', 'task': 'u'}"), "duplicate_field", "task"),
                arguments("duplicate key in payload", j("{'task': 't', 'payload': {'a': 1, 'a': 2}}"), "duplicate_field", "payload"),
                arguments("raw control character", "{\"task\": \"t\u0001\"}", "malformed_json", "task"),
                arguments("NaN", j("{'task': 't', 'payload': NaN}"), "malformed_json", "payload"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badJobs")
    void aBadJobIsRefusedNamingTheFieldAndNothingIsWritten(String name, String body, String code, String field) {
        ApiClient.Reply r = f.client().post("/jobs", body);
        assertThat(r.status()).as(r.toString()).isEqualTo(400);
        assertThat(r.errorCode()).as(r.toString()).isEqualTo(code);
        assertThat(r.errorField()).as(r.toString()).isEqualTo(field);
        assertThat(r.errorMessage()).as(r.toString()).isNotBlank();
        assertThat(f.jobCount()).isZero();
    }

    static String payloads(int n) {
        return IntStream.range(0, n).mapToObj(i -> "{\"i\": " + i + "}").collect(Collectors.joining(",", "[", "]"));
    }

    static Stream<Arguments> badBatches() {
        String tenGoodOneBad = IntStream.range(0, 10).mapToObj(i -> i == 6 ? "{\"s\": \"\\u0000\"}" : "{\"i\": " + i + "}")
                .collect(Collectors.joining(",", "[", "]"));
        return Stream.of(
                arguments("payloads missing", j("{'task': 't'}"), "missing_field", "payloads", null),
                arguments("numbers that render too long", "{\"task\": \"t\", \"payloads\": [{}, [" + "1e131071,".repeat(9)
                        + "1e131071]]}", "invalid_field", "payloads", "payloads[1]"),
                arguments("payloads an object", j("{'task': 't', 'payloads': {}}"), "invalid_field", "payloads", "1-1000"),
                arguments("payloads empty", j("{'task': 't', 'payloads': []}"), "invalid_field", "payloads", "1-1000"),
                arguments("1,001 payloads", "{\"task\": \"t\", \"payloads\": " + payloads(1001) + "}", "invalid_field", "payloads", "1-1000"),
                arguments("one NUL among ten", "{\"task\": \"t\", \"payloads\": " + tenGoodOneBad + "}", "invalid_field", "payloads", "payloads[6]"),
                arguments("lone surrogate in an element", j("{'task': 't', 'payloads': [{}, ['\\udfff']]}"), "invalid_field", "payloads", "payloads[1]"),
                arguments("task missing", "{\"payloads\": [1]}", "missing_field", "task", null),
                arguments("tenant with NUL", j("{'task': 't', 'tenant': '\\u0000', 'payloads': [1]}"), "invalid_field", "tenant", null),
                arguments("max_attempts '3'", j("{'task': 't', 'max_attempts': '3', 'payloads': [1]}"), "invalid_field", "max_attempts", null),
                arguments("delay too large", j("{'task': 't', 'delay_seconds': 1e9, 'payloads': [1]}"), "invalid_field", "delay_seconds", null),
                arguments("delay 1e1000000000", j("{'task': 't', 'delay_seconds': 1e1000000000, 'payloads': [1]}"), "invalid_field", "delay_seconds", "1e1000000000"),
                arguments("1e9999999999 in one element", j("{'task': 't', 'payloads': [1, 2, {'n': [1e9999999999]}]}"), "invalid_field", "payloads", "payloads[2].n[0]"),
                arguments("idempotency_key is not accepted", j("{'task': 't', 'idempotency_key': 'k', 'payloads': [1]}"), "unknown_field", "idempotency_key", null));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badBatches")
    void aBadBatchIsRefusedWhole(String name, String body, String code, String field, String messagePart) {
        ApiClient.Reply r = f.client().post("/jobs/batch", body);
        assertThat(r.status()).as(r.toString()).isEqualTo(400);
        assertThat(r.errorCode()).as(r.toString()).isEqualTo(code);
        assertThat(r.errorField()).as(r.toString()).isEqualTo(field);
        if (messagePart != null) assertThat(r.errorMessage()).contains(messagePart);
        assertThat(f.jobCount()).isZero();
    }

    static Stream<Arguments> badWeights() {
        return Stream.of(
                arguments("/tenants/acme", j("{}"), "missing_field", "weight"),
                arguments("/tenants/acme", j("{'queue': 'q'}"), "missing_field", "weight"),
                arguments("/tenants/acme", j("{'max_running': 0}"), "invalid_field", "max_running"),
                arguments("/tenants/acme", j("{'max_running': -1}"), "invalid_field", "max_running"),
                arguments("/tenants/acme", j("{'max_running': 1000001}"), "invalid_field", "max_running"),
                arguments("/tenants/acme", j("{'max_running': 2.5}"), "invalid_field", "max_running"),
                arguments("/tenants/acme", j("{'max_running': 2.0}"), "invalid_field", "max_running"),
                arguments("/tenants/acme", j("{'max_running': 1e3}"), "invalid_field", "max_running"),
                arguments("/tenants/acme", j("{'max_running': 1e9999999999}"), "invalid_field", "max_running"),
                arguments("/tenants/acme", j("{'max_running': 99999999999999999999999}"), "invalid_field", "max_running"),
                arguments("/tenants/acme", j("{'max_running': '2'}"), "invalid_field", "max_running"),
                arguments("/tenants/acme", j("{'max_running': true}"), "invalid_field", "max_running"),
                arguments("/tenants/acme", j("{'max_running': [2]}"), "invalid_field", "max_running"),
                arguments("/tenants/acme", j("{'max_running': 2, 'weight': 0}"), "invalid_field", "weight"),
                arguments("/tenants/acme", j("{'weight': 0}"), "invalid_field", "weight"),
                arguments("/tenants/acme", j("{'weight': -1}"), "invalid_field", "weight"),
                arguments("/tenants/acme", j("{'weight': 1000000.01}"), "invalid_field", "weight"),
                arguments("/tenants/acme", j("{'weight': 1e-7}"), "invalid_field", "weight"),
                arguments("/tenants/acme", j("{'weight': 0.00000099999999999999999999}"), "invalid_field", "weight"),
                arguments("/tenants/acme", j("{'weight': 1e2147483647}"), "invalid_field", "weight"),
                arguments("/tenants/acme", j("{'weight': 1e9999999999}"), "invalid_field", "weight"),
                arguments("/tenants/acme", j("{'weight': NaN}"), "malformed_json", "weight"),
                arguments("/tenants/acme", j("{'weight': '3'}"), "invalid_field", "weight"),
                arguments("/tenants/acme", j("{'weight': true}"), "invalid_field", "weight"),
                arguments("/tenants/acme", j("{'weight': 1e-400}"), "invalid_field", "weight"),
                arguments("/tenants/acme", j("{'weight': 2, 'queue': 'a b'}"), "invalid_field", "queue"),
                arguments("/tenants/acme", j("{'weight': 2, 'queue': '\\u0000'}"), "invalid_field", "queue"),
                arguments("/tenants/acme", j("{'wieght': 2}"), "unknown_field", "wieght"),
                arguments("/tenants/acme", j("[2]"), "not_an_object", null),
                arguments("/tenants/a!b", j("{'weight': 2}"), "invalid_field", "tenant"),
                // Jetty refuses an encoded NUL in the path before routing; the answer is still JSON 400
                arguments("/tenants/a%00b", j("{'weight': 2}"), "bad_request", null),
                arguments("/tenants/" + repeat('t', 129), j("{'weight': 2}"), "invalid_field", "tenant"));
    }

    @ParameterizedTest(name = "PUT {0} {1}")
    @MethodSource("badWeights")
    void aBadWeightIsRefused(String path, String body, String code, String field) {
        ApiClient.Reply r = f.client().put(path, body);
        assertThat(r.status()).as(r.toString()).isEqualTo(400);
        assertThat(r.errorCode()).as(r.toString()).isEqualTo(code);
        assertThat(r.errorField()).as(r.toString()).isEqualTo(field);
        assertThat(f.db().dsl().resultQuery("SELECT count(*) FROM tenants").fetchSingle(0, Long.class)).isZero();
    }

    static Stream<Arguments> badQueueSettings() {
        return Stream.of(
                arguments("/queues/default", j("{}"), "missing_field", "fairness"),
                arguments("/queues/default", j("{'fairness': null}"), "missing_field", "fairness"),
                arguments("/queues/default", j("{'fairness': 'time'}"), "invalid_field", "fairness"),
                arguments("/queues/default", j("{'fairness': 'WORK'}"), "invalid_field", "fairness"),
                arguments("/queues/default", j("{'fairness': ''}"), "invalid_field", "fairness"),
                arguments("/queues/default", j("{'fairness': 1}"), "invalid_field", "fairness"),
                arguments("/queues/default", j("{'fairness': ['work']}"), "invalid_field", "fairness"),
                arguments("/queues/default", j("{'fairness': '" + repeat('w', 100_000) + "'}"), "invalid_field", "fairness"),
                arguments("/queues/default", j("{'fairness': 'work', 'weight': 2}"), "unknown_field", "weight"),
                arguments("/queues/default", j("{'retention': 7}"), "invalid_field", "retention"),
                arguments("/queues/default", j("{'retention': {'done': -1}}"), "invalid_field", "retention.done"),
                arguments("/queues/default", j("{'retention': {'dead': 1.5}}"), "invalid_field", "retention.dead"),
                arguments("/queues/default", j("{'retention': {'cancelled': '7d'}}"), "invalid_field", "retention.cancelled"),
                arguments("/queues/default", j("{'retention': {'done': 3153600001}}"), "invalid_field", "retention.done"),
                arguments("/queues/default", j("{'retention': {'done': 1e30}}"), "invalid_field", "retention.done"),
                arguments("/queues/default", j("{'retention': {'running': 1}}"), "unknown_field", "retention.running"),
                arguments("/queues/default", j("{'retention': {}}"), "missing_field", "retention.done"),
                arguments("/queues/default", j("{'fairness': 'work', 'retention': {'done': null}}"), "missing_field", "retention.done"),
                arguments("/queues/default", j("[2]"), "not_an_object", null),
                arguments("/queues/a!b", j("{'fairness': 'work'}"), "invalid_field", "queue"),
                arguments("/queues/" + repeat('q', 129), j("{'fairness': 'work'}"), "invalid_field", "queue"));
    }

    @ParameterizedTest(name = "PUT {0} {1}")
    @MethodSource("badQueueSettings")
    void aBadQueueSettingIsRefused(String path, String body, String code, String field) {
        ApiClient.Reply r = f.client().put(path, body);
        assertThat(r.status()).as(r.toString()).isEqualTo(400);
        assertThat(r.errorCode()).as(r.toString()).isEqualTo(code);
        assertThat(r.errorField()).as(r.toString()).isEqualTo(field);
        assertThat(r.toString().length()).as("the answer quotes a short excerpt at most").isLessThan(2000);
        assertThat(f.db().dsl().resultQuery("SELECT count(*) FROM queues").fetchSingle(0, Long.class)).isZero();
    }

    static Stream<Arguments> badReads() {
        return Stream.of(
                arguments("/jobs/abc", 400, "invalid_field", "id"),
                arguments("/jobs/0", 400, "invalid_field", "id"),
                arguments("/jobs/-3", 400, "invalid_field", "id"),
                arguments("/jobs/1.5", 400, "invalid_field", "id"),
                arguments("/jobs/+7", 400, "invalid_field", "id"),
                arguments("/jobs/99999999999999999999", 400, "invalid_field", "id"),
                arguments("/jobs/1e3", 400, "invalid_field", "id"),
                arguments("/jobs/%ff", 400, "bad_request", null),
                arguments("/jobs?after=99999999999999999999", 400, "invalid_field", "after"),
                arguments("/jobs?after=-1", 400, "invalid_field", "after"),
                arguments("/jobs?limit=%2B5", 400, "invalid_field", "limit"),
                arguments("/jobs?limit=1e2", 400, "invalid_field", "limit"),
                arguments("/jobs?tenant=%ff", 400, "invalid_field", "tenant"),
                // the server's decoder would drop these parameters silently
                arguments("/jobs?limit=%zz", 400, "invalid_field", "limit"),
                arguments("/jobs?tenant=a&after=%", 400, "invalid_field", "after"),
                arguments("/jobs/12345", 404, "job_not_found", "id"),
                arguments("/jobs?limit=0", 400, "invalid_field", "limit"),
                arguments("/jobs?limit=501", 400, "invalid_field", "limit"),
                arguments("/jobs?limit=ten", 400, "invalid_field", "limit"),
                arguments("/jobs?after=0", 400, "invalid_field", "after"),
                arguments("/jobs?status=failed", 400, "invalid_field", "status"),
                arguments("/jobs?tenant=a!", 400, "invalid_field", "tenant"),
                arguments("/jobs?queue=", 400, "invalid_field", "queue"),
                arguments("/jobs?limit=1&limit=2", 400, "invalid_field", "limit"),
                arguments("/jobs?tenatn=acme", 400, "unknown_field", "tenatn"),
                arguments("/nowhere", 404, "not_found", null),
                arguments("/jobs/1/retry/now", 404, "not_found", null),
                // endpoints that take no query parameters refuse any, rather than seem to filter
                arguments("/stats?queue=reports", 400, "unknown_field", "queue"),
                arguments("/workers?x=1", 400, "unknown_field", "x"),
                arguments("/jobs/1?%zz", 400, "unknown_field", "%zz"));
    }

    @ParameterizedTest(name = "GET {0}")
    @MethodSource("badReads")
    void aBadReadIsRefused(String path, int status, String code, String field) {
        ApiClient.Reply r = f.client().rawGet(path);
        assertThat(r.status()).as(r.toString()).isEqualTo(status);
        assertThat(r.errorCode()).as(r.toString()).isEqualTo(code);
        assertThat(r.errorField()).as(r.toString()).isEqualTo(field);
    }

    static Stream<Arguments> wrongMethods() {
        return Stream.of(arguments("DELETE", "/jobs", "GET, POST"), arguments("PUT", "/jobs/1", "GET"),
                arguments("GET", "/jobs/1/retry", "POST"), arguments("POST", "/stats", "GET"),
                arguments("POST", "/tenants/acme", "PUT"), arguments("DELETE", "/jobs/1", "GET"));
    }

    /** RFC 9110 §15.5.6: a 405 must list the methods the resource does support in {@code Allow}. */
    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("wrongMethods")
    void aWrongMethodIs405JsonWithAnAllowHeader(String method, String path, String allowed) {
        ApiClient.Reply r = f.client().method(method, path);
        assertThat(r.status()).as(r.toString()).isEqualTo(405);
        assertThat(r.errorCode()).isEqualTo("method_not_allowed");
        assertThat(r.headers().firstValue("Allow").map(a -> java.util.Arrays.stream(a.split(",")).map(String::trim).sorted().toList()))
                .as("Allow header").hasValue(java.util.Arrays.stream(allowed.split(", ")).sorted().toList());
    }

    @Test
    void retryOfAnIdThatIsNotAPositiveIntegerIs400() {
        ApiClient.Reply r = f.client().post("/jobs/x1/retry", "");
        assertThat(r.status()).isEqualTo(400);
        assertThat(r.errorField()).isEqualTo("id");
    }

    /** Issue 11: an error answer is at most 4 KiB and quotes at most a short prefix of what it refuses. */
    @Nested
    class BoundedErrors {
        static Stream<Arguments> bodies() {
            String hugeKey = repeat('k', 100_000);
            return Stream.of(
                    arguments("a gigabyte-long delay", j("{'task': 't', 'delay_seconds': 1e1000000000}"), "delay_seconds"),
                    arguments("a 100,000-character unknown field", j("{'task': 't', '" + hugeKey + "': 1}"), null),
                    arguments("a 100,000-character key twice", j("{'task': 't', 'payload': {'" + hugeKey + "': 1, '" + hugeKey + "': 2}}"), "payload"),
                    arguments("a 100,000-character task", j("{'task': '" + repeat('t', 100_000) + "'}"), "task"),
                    arguments("a 100,000-character idempotency key", j("{'task': 't', 'idempotency_key': '" + repeat('\\', 100_000) + "'}"), "idempotency_key"),
                    arguments("a 1,000-digit max_attempts", j("{'task': 't', 'max_attempts': " + repeat('9', 1000) + "}"), "max_attempts"),
                    arguments("20,000 control characters in a key", j("{'task': 't', '" + "\\u0001".repeat(20_000) + "': 1}"), null));
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("bodies")
        void anErrorBodyIsAtMost4KiB(String name, String body, String field) {
            ApiClient.Reply r = f.client().post("/jobs", body);
            assertThat(r.status()).as(r.toString()).isEqualTo(400);
            assertThat(r.text().getBytes(StandardCharsets.UTF_8).length).as(r.toString()).isLessThanOrEqualTo(ProblemResponse.MAX_BODY_BYTES);
            assertThat(r.errorMessage()).as(r.toString()).hasSizeLessThan(1024);
            if (field != null) assertThat(r.errorField()).isEqualTo(field);
        }

        @Test
        void theLimitsOfTheDomainAreAccepted() {
            assertThat(f.client().put("/tenants/acme", j("{'weight': 0.000001}")).status()).isEqualTo(200);
            assertThat(f.client().put("/tenants/acme", j("{'weight': 1e6}")).status()).isEqualTo(200);
            ApiClient.Reply r = f.client().post("/jobs", j("{'task': 't', 'max_attempts': 100, 'delay_seconds': 31536000,"
                    + " 'payload': [1e999, -1e-999, 0e999999999, " + repeat('[', 999) + repeat(']', 999) + "]}"));
            assertThat(r.status()).as(r.toString()).isEqualTo(201);
            assertThat(r.json().path("payload").get(2).asText()).isEqualTo("0");
        }
    }

    @Nested
    class MediaTypeAndSize {
        static Stream<Arguments> contentTypes() {
            return Stream.of(arguments("text/plain"), arguments("application/x-www-form-urlencoded"),
                    arguments("application/json; charset=iso-8859-1"), arguments((Object) null));
        }

        @ParameterizedTest(name = "Content-Type {0}")
        @MethodSource("contentTypes")
        void aBodyThatIsNotJsonIs415(String contentType) {
            ApiClient.Reply r = f.client().post("/jobs", "{\"task\": \"t\"}".getBytes(StandardCharsets.UTF_8), contentType);
            assertThat(r.status()).as(r.toString()).isEqualTo(415);
            assertThat(r.errorCode()).isEqualTo("unsupported_media_type");
            assertThat(f.jobCount()).isZero();
        }

        @Test
        void jsonWithAUtf8CharsetIsAccepted() {
            ApiClient.Reply r = f.client().post("/jobs", "{\"task\": \"t\"}".getBytes(StandardCharsets.UTF_8), "application/json; charset=UTF-8");
            assertThat(r.status()).as(r.toString()).isEqualTo(201);
        }

        @Test
        void aBodyOverOneMebibyteIs413AndNothingIsWritten() {
            String body = "{\"task\": \"t\", \"payload\": \"" + repeat('x', 1024 * 1024) + "\"}";
            ApiClient.Reply r = f.client().postAnnounced("/jobs", body);
            assertThat(r.status()).as(r.status() + "").isEqualTo(413);
            assertThat(r.errorCode()).isEqualTo("payload_too_large");
            assertThat(r.errorMessage()).contains("1048576");
            assertThat(f.jobCount()).isZero();
        }

        @Test
        void aBodyJustUnderTheLimitIsAccepted() {
            String head = "{\"task\": \"t\", \"payload\": \"";
            String body = head + repeat('x', 1024 * 1024 - head.length() - 2) + "\"}";
            assertThat(body.length()).isEqualTo(1024 * 1024);
            ApiClient.Reply r = f.client().post("/jobs", body);
            assertThat(r.status()).as(r.status() + "").isEqualTo(201);
        }
    }

    /** R05: raw bytes that are not UTF-8, anywhere a string can be. */
    @Nested
    class InvalidUtf8 {
        byte[] bytes(String before, byte[] bad, String after) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            out.writeBytes(before.getBytes(StandardCharsets.UTF_8));
            out.writeBytes(bad);
            out.writeBytes(after.getBytes(StandardCharsets.UTF_8));
            return out.toByteArray();
        }

        static Stream<Arguments> sequences() {
            return Stream.of(
                    arguments("0xff", new byte[] {(byte) 0xff}),
                    arguments("lone continuation 0x80", new byte[] {(byte) 0x80}),
                    arguments("truncated 3-byte 0xe2 0x82", new byte[] {(byte) 0xe2, (byte) 0x82}),
                    arguments("overlong NUL 0xc0 0x80", new byte[] {(byte) 0xc0, (byte) 0x80}),
                    arguments("CESU surrogate 0xed 0xa0 0x80", new byte[] {(byte) 0xed, (byte) 0xa0, (byte) 0x80}));
        }

        @ParameterizedTest(name = "{0} in a payload string")
        @MethodSource("sequences")
        void inAPayloadString(String name, byte[] bad) {
            ApiClient.Reply r = f.client().post("/jobs", bytes("{\"task\": \"t\", \"payload\": {\"s\": [\"a", bad, "b\"]}}"), "application/json");
            assertThat(r.status()).as(r.toString()).isEqualTo(400);
            assertThat(r.errorCode()).isEqualTo("invalid_encoding");
            assertThat(r.errorField()).isEqualTo("payload");
            assertThat(f.jobCount()).isZero();
        }

        @ParameterizedTest(name = "{0} in a payload key")
        @MethodSource("sequences")
        void inAPayloadKey(String name, byte[] bad) {
            ApiClient.Reply r = f.client().post("/jobs", bytes("{\"task\": \"t\", \"payload\": {\"k", bad, "\": 1}}"), "application/json");
            assertThat(r.status()).as(r.toString()).isEqualTo(400);
            assertThat(r.errorCode()).isEqualTo("invalid_encoding");
            assertThat(r.errorField()).isEqualTo("payload");
        }

        @Test
        void inTheTenant() {
            ApiClient.Reply r = f.client().post("/jobs", bytes("{\"task\": \"t\", \"tenant\": \"ac", new byte[] {(byte) 0xfe}, "me\"}"), "application/json");
            assertThat(r.status()).as(r.toString()).isEqualTo(400);
            assertThat(r.errorCode()).isEqualTo("invalid_encoding");
            assertThat(r.errorField()).isEqualTo("tenant");
        }

        @Test
        void afterAnEscapedHighSurrogateItIsStillRefused() {
            // \ud83d followed by a malformed byte must not be mistaken for a valid surrogate pair
            ApiClient.Reply r = f.client().post("/jobs", bytes("{\"task\": \"t\", \"payload\": \"\\ud83d", new byte[] {(byte) 0xff}, "\"}"), "application/json");
            assertThat(r.status()).as(r.toString()).isEqualTo(400);
            assertThat(r.errorField()).isEqualTo("payload");
            assertThat(f.jobCount()).isZero();
        }

        @Test
        void inABatchElementNothingIsWritten() {
            ApiClient.Reply r = f.client().post("/jobs/batch",
                    bytes("{\"task\": \"t\", \"payloads\": [1, 2, 3, \"", new byte[] {(byte) 0xc3}, "\", 5, 6, 7, 8, 9, 10]}"), "application/json");
            assertThat(r.status()).as(r.toString()).isEqualTo(400);
            assertThat(r.errorCode()).isEqualTo("invalid_encoding");
            assertThat(r.errorField()).isEqualTo("payloads");
            assertThat(f.jobCount()).isZero();
        }

        @Test
        void validMultiByteTextIsKeptExactly() {
            ApiClient.Reply r = f.client().post("/jobs", "{\"task\": \"t\", \"payload\": {\"s\": \"caf\u00e9 \uD83D\uDE00 \u65e5\u672c\"}}");
            assertThat(r.status()).as(r.toString()).isEqualTo(201);
            assertThat(r.json().path("payload").path("s").asText()).isEqualTo("caf\u00e9 \uD83D\uDE00 \u65e5\u672c");
        }
    }
}
