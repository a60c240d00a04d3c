package io.jobq.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.jobq.application.fake.Await;
import io.jobq.application.port.JobStore;
import io.jobq.application.port.NewJob;
import io.jobq.application.worker.HandlerRegistry;
import io.jobq.application.worker.JobHandler;
import io.jobq.application.worker.Worker;
import io.jobq.application.worker.WorkerListener;
import io.jobq.application.worker.WorkerSettings;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.JobState;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.StoredText;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.retry.BackoffPolicy;
import io.jobq.domain.retry.RetryPolicy;
import io.jobq.domain.tenant.TenantId;
import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;
import org.jooq.Record;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Robustness case R06: outcomes the database refuses to store, at the worker. Each handler below fails (or succeeds)
 * with text PostgreSQL cannot take as is. Expect: the state transition always happens (scheduled after
 * attempt 1, dead after max_attempts, or done), last_error and result are stored sanitised and bounded
 * ({@link JobStore#MAX_ERROR_BYTES} = 8 KiB UTF-8, ending {@link StoredText#TRUNCATION_MARKER} when cut,
 * valid UTF-8, no split code point), nothing is left running, and the worker keeps serving: a following
 * {@code noop} is done within 1 s.
 */
@ExtendWith(PostgresDatabaseExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class UnstorableOutcomesAreStoredSanitisedTest {
    static final String EMOJI = "\ud83d\ude00"; // 4 UTF-8 bytes
    /** Bytes that are not UTF-8: a lead byte without continuation, 0xFF, and an encoded surrogate (CESU-8). */
    static final byte[] NOT_UTF8 = {'x', (byte) 0xC3, 0x28, (byte) 0xFF, (byte) 0xED, (byte) 0xA0, (byte) 0x80, 'y'};

    static final Map<String, String> FAILURES = Map.of(
            "fail_nul", "before\u0000after",
            "fail_bad_utf8", new String(NOT_UTF8, StandardCharsets.UTF_8) + " / lone " + "\ud83d" + " / " + new String(NOT_UTF8, StandardCharsets.ISO_8859_1),
            "fail_100k", ("abc" + EMOJI + "\u00e9\u20ac").repeat(100_000 / 7 + 1).substring(0, 100_000),
            "fail_emoji", EMOJI.repeat(5_000)); // 20,000 bytes: the 8 KiB cut lands inside the emoji run

    record Failure(Job claimed, String error, Job recorded) {}

    TestDatabase db;
    PostgresJobStore store;
    Worker worker;
    final List<Failure> failures = new CopyOnWriteArrayList<>();

    @BeforeAll
    void start(TestDatabase db) {
        this.db = db;
        store = new PostgresJobStore(db.dataSource());
        HandlerRegistry handlers = HandlerRegistry.withBuiltIns();
        FAILURES.forEach((task, message) -> handlers.register(task, ctx -> {
            throw new IllegalStateException(message);
        }));
        ObjectNode withNul = JsonNodeFactory.instance.objectNode().put("s", "a\u0000b").put("k\u0000ey", 1).put("lone", "x\udc00");
        handlers.register("result_nul", ctx -> Optional.of(withNul));
        JobHandler hugeNumber = ctx -> Optional.of(JsonNodeFactory.instance.objectNode().put("n", new BigDecimal("1e-20000")));
        handlers.register("result_unstorable_number", hugeNumber);
        String twoMebibytes = "x".repeat(2 * 1024 * 1024);
        handlers.register("result_too_large", ctx -> Optional.of(JsonNodeFactory.instance.objectNode().put("s", twoMebibytes)));
        WorkerSettings shortSettings = WorkerSettings.builder().lease(Duration.ofSeconds(2))
                .maintenanceInterval(Duration.ofMillis(500)).pollInterval(Duration.ofSeconds(30)).build();
        worker = Worker.builder(store, handlers)
                // short backoff so the second attempt comes quickly; the jitter window is [0, 200 ms]
                .retryPolicy(new RetryPolicy(BackoffPolicy.of(Duration.ofMillis(200), Duration.ofSeconds(1))))
                .wakeups(new PostgresWakeupChannel(db.jdbcUrl(), db.dataSource()))
                .settings(shortSettings)
                .listener(new WorkerListener() {
                    @Override
                    public void failed(Job claimed, String error, Job recorded) {
                        failures.add(new Failure(claimed, error, recorded));
                    }
                })
                .build();
        worker.start();
    }

    @AfterAll
    void stop() {
        worker.close();
    }

    static Stream<Arguments> failingHandlers() {
        return FAILURES.keySet().stream().sorted().map(Arguments::of);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("failingHandlers")
    void aRefusedFailureMessageIsStoredSanitisedAndTheJobMovesOn(String task) {
        JobId id = enqueue(task, 2);
        Job dead = awaitState(id, JobState.DEAD);
        assertThat(dead.attempts()).isEqualTo(2);

        // the listener hears of a failure just after the store recorded it
        Await.until(Duration.ofSeconds(5), "both failures reported",
                () -> failures.stream().filter(f -> f.claimed().id().equals(id)).count() == 2);
        // Reports of two attempts may arrive in either order (each comes from its own run's thread).
        List<Failure> mine = failures.stream().filter(f -> f.claimed().id().equals(id))
                .sorted(java.util.Comparator.comparingInt(f -> f.claimed().attempts())).toList();
        assertThat(mine.get(0).recorded().state()).as("after attempt 1").isEqualTo(JobState.SCHEDULED);
        assertThat(mine.get(1).recorded().state()).as("after attempt 2 of 2").isEqualTo(JobState.DEAD);

        String expected = StoredText.sanitize(Worker_describe(FAILURES.get(task)), JobStore.MAX_ERROR_BYTES);
        for (Failure f : mine) assertSanitised(f.recorded().lastError().orElseThrow(), expected);
        String stored = storedLastError(id);
        assertSanitised(stored, expected);
        assertWorkerStillServes();
    }

    @org.junit.jupiter.api.Test
    void aResultWithNulAndLoneSurrogatesIsStoredSanitisedAndTheJobIsDone() {
        JobId id = enqueue("result_nul", 1);
        Job done = awaitState(id, JobState.DONE);
        assertThat(done.attempts()).isEqualTo(1);
        Record r = db.dsl().resultQuery("SELECT result->>'s', result->>'k\uFFFDey', result->>'lone' FROM jobs WHERE id = {0}",
                id.value()).fetchSingle();
        assertThat(r.get(0, String.class)).isEqualTo("a\uFFFDb");
        assertThat(r.get(1, String.class)).isEqualTo("1");
        assertThat(r.get(2, String.class)).isEqualTo("x\uFFFD");
        assertWorkerStillServes();
    }

    /**
     * Same kind: a result jsonb cannot hold at all (a number beyond numeric's range). The handler
     * succeeded, so the job is done at once (not left running until its lease lapses and then re-run),
     * without the result, and last_error says why the result is missing.
     */
    @org.junit.jupiter.api.Test
    void aResultTheDatabaseRefusesStillCompletesTheRun() {
        JobId id = enqueue("result_unstorable_number", 3);
        Job done = awaitState(id, JobState.DONE);
        assertThat(done.attempts()).as("the handler ran once").isEqualTo(1);
        assertThat(done.result()).isEmpty();
        assertThat(done.lastError()).hasValueSatisfying(e -> assertThat(e).contains("result").contains("not stored"));
        double ms = db.dsl().resultQuery("SELECT extract(epoch FROM finished_at - started_at) * 1000 FROM jobs WHERE id = {0}",
                id.value()).fetchSingle(0, Double.class);
        // Under the 2 s lease: a run left running would be reaped and run again (attempts 2), not done here.
        assertThat(ms).as("claim → done, ms (not a lease later)").isLessThan(1_900);
        assertWorkerStillServes();
    }

    /** Bounded: a result over {@link JobStore#MAX_RESULT_BYTES} (1 MiB) is not stored; the job is done and says so. */
    @org.junit.jupiter.api.Test
    void aResultOverTheCapIsDroppedAndTheJobIsDone() {
        JobId id = enqueue("result_too_large", 3);
        Job done = awaitState(id, JobState.DONE);
        assertThat(done.attempts()).isEqualTo(1);
        assertThat(done.result()).isEmpty();
        assertThat(done.lastError()).hasValueSatisfying(e -> assertThat(e).contains("result not stored").contains("1048576"));
        assertWorkerStillServes();
    }

    // ---------------------------------------------------------------- helpers

    /** The worker stores a failure as {@code Class: message}. */
    static String Worker_describe(String message) {
        return IllegalStateException.class.getName() + ": " + message;
    }

    static void assertSanitised(String stored, String expected) {
        byte[] utf8 = stored.getBytes(StandardCharsets.UTF_8);
        assertThat(utf8.length).as("stored bytes").isLessThanOrEqualTo(JobStore.MAX_ERROR_BYTES);
        assertThat(stored).doesNotContain("\u0000");
        assertThat(new String(utf8, StandardCharsets.UTF_8)).as("round-trips as valid UTF-8 (no lone surrogate)").isEqualTo(stored);
        assertThat(stored.codePoints().noneMatch(cp -> Character.isSurrogate((char) cp) && cp <= 0xFFFF))
                .as("no split code point").isTrue();
        assertThat(stored).isEqualTo(expected);
        if (stored.endsWith(StoredText.TRUNCATION_MARKER)) {
            assertThat(utf8.length).as("a cut text fills the budget up to one code point").isGreaterThan(JobStore.MAX_ERROR_BYTES - 4);
        }
    }

    private String storedLastError(JobId id) {
        return db.dsl().resultQuery("SELECT last_error FROM jobs WHERE id = {0}", id.value()).fetchSingle(0, String.class);
    }

    private JobId enqueue(String task, int maxAttempts) {
        return store.enqueue(NewJob.of(TenantId.of("t1"), QueueName.DEFAULT, TaskName.of(task), "{}").withMaxAttempts(maxAttempts))
                .job().id();
    }

    private Job awaitState(JobId id, JobState state) {
        Await.until(Duration.ofSeconds(15), "job " + id + " " + state.dbName(), () -> store.get(id).orElseThrow().state() == state);
        return store.get(id).orElseThrow();
    }

    private void assertWorkerStillServes() {
        JobId noop = enqueue("noop", 1);
        awaitState(noop, JobState.DONE);
        double ms = db.dsl().resultQuery("SELECT extract(epoch FROM finished_at - created_at) * 1000 FROM jobs WHERE id = {0}",
                noop.value()).fetchSingle(0, Double.class);
        assertThat(ms).as("a following noop: enqueue → done, ms").isLessThan(1_000);
        assertThat(db.dsl().resultQuery("SELECT count(*) FROM jobs WHERE state = 'running'").fetchSingle(0, Long.class))
                .as("jobs left running").isZero();
    }
}
