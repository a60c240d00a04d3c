package io.jobq.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import io.jobq.application.port.NewJob;
import io.jobq.application.port.NewJobBatch;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.tenant.TenantId;
import io.jobq.postgres.JobClient;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Robustness case R05: bytes PostgreSQL refuses, at the edge. Walks the case's list in order: NUL in a payload string,
 * in a payload object key, deep in a nested array, in tenant / queue / task / idempotency_key; a lone
 * surrogate; raw invalid UTF-8 bytes; a batch with one bad element among ten good ones. Each through
 * {@code POST /jobs} and {@code POST /jobs/batch}: 400 naming the field, never 500, no row written (jobs
 * nor tenants). {@link ValidationTest} holds the wider validation table; this class is the case's map.
 * The transactional Java client is an edge too: the same inputs raise IllegalArgumentException, no row.
 *
 * <p>Bodies use ' for " and {@code \\u0000} is the six-character JSON escape; {@code BAD} marks where
 * raw invalid UTF-8 bytes (0xC3 0x28, a lead byte without its continuation) are spliced in.
 */
class BytesPostgresRefusesAre400Test extends ApiTestCase {
    static final String BAD = "<BAD>";
    static final byte[] INVALID_UTF8 = {(byte) 0xC3, 0x28};

    static byte[] body(String text) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        String[] parts = text.split(BAD, -1);
        for (int i = 0; i < parts.length; i++) {
            if (i > 0) out.writeBytes(INVALID_UTF8);
            out.writeBytes(parts[i].getBytes(StandardCharsets.UTF_8));
        }
        return out.toByteArray();
    }

    static Stream<Arguments> singleJobs() {
        return Stream.of(
                arguments("NUL in a payload string", j("{'task': 'noop', 'payload': {'text': 'a\\u0000b'}}"), "payload"),
                arguments("NUL in a payload object key", j("{'task': 'noop', 'payload': {'k\\u0000': 1}}"), "payload"),
                arguments("NUL deep in a nested array", j("{'task': 'noop', 'payload': [[1, [2, [3, {'d': ['ok', 'x\\u0000']}]]]]}"), "payload"),
                arguments("NUL in tenant", j("{'task': 'noop', 'tenant': 't\\u0000'}"), "tenant"),
                arguments("NUL in queue", j("{'task': 'noop', 'queue': 'q\\u0000'}"), "queue"),
                arguments("NUL in task", j("{'task': 'noop\\u0000'}"), "task"),
                arguments("NUL in idempotency_key", j("{'task': 'noop', 'idempotency_key': 'k\\u0000'}"), "idempotency_key"),
                arguments("lone surrogate in a payload string", j("{'task': 'noop', 'payload': {'s': 'a\\ud800'}}"), "payload"),
                arguments("lone surrogate in a payload key", j("{'task': 'noop', 'payload': {'\\ud800': 1}}"), "payload"),
                arguments("lone surrogate in tenant", j("{'task': 'noop', 'tenant': '\\ud800'}"), "tenant"),
                arguments("lone surrogate in idempotency_key", j("{'task': 'noop', 'idempotency_key': '\\ud800'}"), "idempotency_key"),
                arguments("invalid UTF-8 in a payload string", j("{'task': 'noop', 'payload': {'s': 'a" + BAD + "b'}}"), "payload"),
                arguments("invalid UTF-8 in a payload key", j("{'task': 'noop', 'payload': {'k" + BAD + "': 1}}"), "payload"),
                arguments("invalid UTF-8 deep in a payload", j("{'task': 'noop', 'payload': [[{'a': ['" + BAD + "']}]]}"), "payload"),
                arguments("invalid UTF-8 in tenant", j("{'task': 'noop', 'tenant': 't" + BAD + "'}"), "tenant"),
                arguments("invalid UTF-8 in queue", j("{'task': 'noop', 'queue': 'q" + BAD + "'}"), "queue"),
                arguments("invalid UTF-8 in task", j("{'task': 'noop" + BAD + "'}"), "task"),
                arguments("invalid UTF-8 in idempotency_key", j("{'task': 'noop', 'idempotency_key': 'k" + BAD + "'}"), "idempotency_key"));
    }

    @ParameterizedTest(name = "POST /jobs: {0}")
    @MethodSource("singleJobs")
    void oneJob(String name, String text, String field) {
        assertRefused(f.client().post("/jobs", body(text), "application/json"), field);
    }

    static String tenGoodOneBad(String bad) {
        return IntStream.range(0, 10).mapToObj(i -> i == 6 ? bad : "{\"i\": " + i + "}").collect(Collectors.joining(", ", "[", "]"));
    }

    static Stream<Arguments> batches() {
        return Stream.of(
                arguments("NUL in a payload string", tenGoodOneBad(j("{'s': 'a\\u0000'}")), j("'noop'"), "", "payloads"),
                arguments("NUL in a payload object key", tenGoodOneBad(j("{'\\u0000': 1}")), j("'noop'"), "", "payloads"),
                arguments("NUL deep in a nested array", tenGoodOneBad(j("[[[['\\u0000']]]]")), j("'noop'"), "", "payloads"),
                arguments("lone surrogate", tenGoodOneBad(j("{'s': '\\ud800'}")), j("'noop'"), "", "payloads"),
                arguments("invalid UTF-8", tenGoodOneBad(j("{'s': '" + BAD + "'}")), j("'noop'"), "", "payloads"),
                arguments("NUL in tenant", tenGoodOneBad("{}"), j("'noop'"), j(", 'tenant': 'a\\u0000'"), "tenant"),
                arguments("NUL in queue", tenGoodOneBad("{}"), j("'noop'"), j(", 'queue': 'a\\u0000'"), "queue"),
                arguments("NUL in task", tenGoodOneBad("{}"), j("'noop\\u0000'"), "", "task"),
                arguments("invalid UTF-8 in tenant", tenGoodOneBad("{}"), j("'noop'"), j(", 'tenant': '" + BAD + "'"), "tenant"));
    }

    @ParameterizedTest(name = "POST /jobs/batch, one bad among ten: {0}")
    @MethodSource("batches")
    void batchWritesNothing(String name, String payloads, String task, String extra, String field) {
        String text = "{\"task\": " + task + extra + ", \"payloads\": " + payloads + "}";
        ApiClient.Reply r = f.client().post("/jobs/batch", body(text), "application/json");
        assertRefused(r, field);
        if (field.equals("payloads")) assertThat(r.errorMessage()).as(r.toString()).contains("payloads[6]");
    }

    @org.junit.jupiter.api.Test
    void theSameBatchWithoutTheBadElementIsAccepted() {
        ApiClient.Reply r = f.client().post("/jobs/batch", "{\"task\": \"noop\", \"payloads\": " + tenGoodOneBad("{}") + "}");
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        assertThat(f.jobCount()).isEqualTo(10);
    }

    /** A NUL in a listing's cursor would reach PostgreSQL, which refuses it in any text parameter. */
    @org.junit.jupiter.api.Test
    void aNulInTheSchedulesCursorIsRefusedByName() {
        ApiClient.Reply r = f.client().get("/schedules?after=a%00b");
        assertThat(r.status()).as(r.toString()).isEqualTo(400);
        assertThat(r.errorField()).as(r.toString()).isEqualTo("after");
    }

    private void assertRefused(ApiClient.Reply r, String field) {
        assertThat(r.status()).as(r.toString()).isNotEqualTo(500).isEqualTo(400);
        assertThat(r.errorField()).as(r.toString()).isEqualTo(field);
        assertThat(r.errorMessage()).as(r.toString()).isNotBlank();
        assertThat(f.jobCount()).as("jobs written").isZero();
        assertThat(f.db().dsl().resultQuery("SELECT count(*) FROM tenants").fetchSingle(0, Long.class)).as("tenants written").isZero();
    }

    // ---------------------------------------------------------------- the Java client edge

    static final TenantId T = TenantId.of("t1");
    static final TaskName NOOP = TaskName.of("noop");

    static Stream<Arguments> clientJobs() {
        // Suppliers: NewJob itself refuses most of these, which is where the refusal belongs.
        return Stream.<Arguments>of(
                arguments("NUL escape in a payload string", (Supplier<NewJob>) () -> NewJob.of(T, QueueName.DEFAULT, NOOP, "{\"s\": \"a\\u0000\"}"), "payload"),
                arguments("NUL escape in a payload key", (Supplier<NewJob>) () -> NewJob.of(T, QueueName.DEFAULT, NOOP, "{\"\\u0000\": 1}"), "payload"),
                arguments("raw NUL character in a payload string", (Supplier<NewJob>) () -> NewJob.of(T, QueueName.DEFAULT, NOOP, "{\"s\": \"a\u0000\"}"), "payload"),
                arguments("lone surrogate escape in a payload", (Supplier<NewJob>) () -> NewJob.of(T, QueueName.DEFAULT, NOOP, "[\"\\ud800\"]"), "payload"),
                arguments("raw lone surrogate in a payload", (Supplier<NewJob>) () -> NewJob.of(T, QueueName.DEFAULT, NOOP, "[\"\ud800\"]"), "payload"),
                arguments("NUL in idempotency_key", (Supplier<NewJob>) () -> NewJob.of(T, QueueName.DEFAULT, NOOP, "{}").withIdempotencyKey("k\u0000"), "idempotency_key"),
                arguments("lone surrogate in idempotency_key", (Supplier<NewJob>) () -> NewJob.of(T, QueueName.DEFAULT, NOOP, "{}").withIdempotencyKey("k\ud800"), "idempotency_key"));
    }

    @ParameterizedTest(name = "JobClient: {0}")
    @MethodSource("clientJobs")
    void javaClientRefusesWithIllegalArgumentAndWritesNothing(String name, Supplier<NewJob> job, String field) throws Exception {
        try (Connection c = f.db().newConnection()) {
            c.setAutoCommit(false);
            assertThatThrownBy(() -> new JobClient().enqueue(c, job.get()))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(field);
            c.rollback();
        }
        assertThatThrownBy(() -> f.store().enqueue(job.get())).isInstanceOf(IllegalArgumentException.class).hasMessageContaining(field);
        assertThat(f.jobCount()).isZero();
    }

    @org.junit.jupiter.api.Test
    void javaClientBatchWithOneBadAmongTenWritesNothing() {
        // an escape: jsonb refuses it in the one INSERT, which then writes nothing
        List<String> escaped = IntStream.range(0, 10).mapToObj(i -> i == 6 ? "{\"s\": \"\\u0000\"}" : "{\"i\": " + i + "}").toList();
        NewJobBatch batch = new NewJobBatch(T, QueueName.DEFAULT, NOOP, escaped, 5, Duration.ZERO);
        assertThatThrownBy(() -> f.store().enqueueBatch(batch)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("payload");
        // a raw NUL character: refused by NewJobBatch, naming the element
        List<String> raw = IntStream.range(0, 10).mapToObj(i -> i == 6 ? "{\"s\": \"\u0000\"}" : "{\"i\": " + i + "}").toList();
        assertThatThrownBy(() -> new NewJobBatch(T, QueueName.DEFAULT, NOOP, raw, 5, Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("payloads[6]");
        assertThat(f.jobCount()).isZero();
        assertThat(Optional.of(f.db().dsl().resultQuery("SELECT count(*) FROM tenants").fetchSingle(0, Long.class))).contains(0L);
    }
}
