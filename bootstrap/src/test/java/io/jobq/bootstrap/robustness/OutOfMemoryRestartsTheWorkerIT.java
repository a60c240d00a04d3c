package io.jobq.bootstrap.robustness;

import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.application.fake.Await;
import io.jobq.application.port.NewJob;
import io.jobq.application.worker.FatalErrorPolicy;
import io.jobq.bootstrap.robustness.Jobs.Row;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.tenant.TenantId;
import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Robustness case R14: an OutOfMemoryError restarts the worker instead of wedging it (issue 11, item 1). A worker
 * process with a small heap ({@code -Xmx96m}) meets, among 12 ordinary jobs, (1) a handler that
 * allocates until the heap runs out, or (2) a job whose ~9 MB payload (written by SQL: HTTP caps
 * bodies at 1 MiB) it cannot parse within that heap. Before, the OutOfMemoryError killed the claim
 * thread (or only failed the run) and the process stayed up, healthy-looking, possibly never
 * claiming again.
 *
 * <p>Expected: the process exits with status 3 within seconds of claiming the poison job (up to ~10 s
 * here, as the JVM thrashes in full collections before it gives up; HotSpot's own
 * -XX:+ExitOnOutOfMemoryError could act no sooner); the test,
 * playing supervisor, starts a replacement each time; every other job ends done; the poison job is
 * claimed by one process after another, each claim counting an attempt (the halted process's lease
 * expires and is reaped), so it ends dead after its max_attempts (3), its last_error saying the
 * lease expired, having cost exactly three process restarts.
 */
@ExtendWith(PostgresDatabaseExtension.class)
class OutOfMemoryRestartsTheWorkerIT {
    static final int POISON_ATTEMPTS = 3;
    /** From the poison job's claim to the exit: heap exhaustion, the log line, the halt; slack for a busy machine. */
    static final Duration PROMPT_EXIT = Duration.ofSeconds(20);
    static final Duration EVERYTHING_SETTLED = Duration.ofMinutes(6);

    @Test
    void aHandlerThatExhaustsTheHeapHaltsTheWorkerAndEveryOtherJobEndsDone(TestDatabase db, @TempDir Path tmp) {
        Jobs jobs = new Jobs(db);
        List<Long> others = enqueueOrdinary(jobs, 6);
        long poison = jobs.enqueue(job(HeapExhaustingHandlers.TASK, "{}").withMaxAttempts(POISON_ATTEMPTS));
        others.addAll(enqueueOrdinary(jobs, 6));
        Path plugin = PluginJar.of(tmp.resolve("heap-exhausting-handlers.jar"), HeapExhaustingHandlers.class);

        superviseUntilSettled(db, jobs, "handler", poison, others, worker -> worker.plugins(plugin));
    }

    @Test
    void aPayloadTooBigToParseInTheHeapHaltsTheWorkerAndEveryOtherJobEndsDone(TestDatabase db) {
        Jobs jobs = new Jobs(db);
        List<Long> others = enqueueOrdinary(jobs, 6);
        long poison = jobs.enqueue(job("noop", "{}").withMaxAttempts(POISON_ATTEMPTS));
        // 1,100,000 × {"k": 0}: about 11 MB as jsonb prints it, a Jackson tree of roughly 200 MB. Schema V2
        // refuses such a payload (jobs_payload_readable); this one stands for a row written before it, or by
        // a session that skips triggers, so the write goes around the trigger.
        int bytes = update(db, """
                UPDATE jobs SET payload = jsonb_build_object('items',
                    (SELECT jsonb_agg(jsonb_build_object('k', 0)) FROM generate_series(1, 1100000)))
                WHERE id = ?""", poison, "SELECT octet_length(payload::text) FROM jobs WHERE id = ?");
        assertThat(bytes).as("payload bytes").isGreaterThan(9_000_000);
        others.addAll(enqueueOrdinary(jobs, 6));

        // Plain `java -jar jobq.jar worker`: the halt is the launcher's default, no JVM flag needed.
        superviseUntilSettled(db, jobs, "payload", poison, others, UnaryOperator.identity());
    }

    /**
     * Plays the supervisor: runs one worker process at a time with a 96 MB heap and starts the next
     * when it exits, until the poison job is dead and the others are done; asserts how each exited.
     */
    private void superviseUntilSettled(TestDatabase db, Jobs jobs, String name, long poison, List<Long> others,
            UnaryOperator<JobqProcess.Builder> options) {
        long deadline = System.nanoTime() + EVERYTHING_SETTLED.toNanos();
        List<Integer> exits = new ArrayList<>();
        for (int generation = 1; !settled(jobs, poison, others); generation++) {
            String id = "r14-" + name + "-" + generation;
            int attemptsBefore = jobs.row(poison).attempts();
            try (JobqProcess worker = options.apply(ShortSettings.workerBuilder(getClass(), db, id, id, "10s")
                    .jvmOptions("-Xmx96m")).start()) {
                Duration left = Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
                Await.value(left, id + " exits, or every job settles (log " + worker.logFile() + ")",
                        () -> !worker.isAlive() || settled(jobs, poison, others) ? Boolean.TRUE : null);
                Row after = jobs.row(poison);
                if (after.attempts() == attemptsBefore) {
                    assertThat(worker.isAlive()).as(id + " exited without claiming the poison job").isTrue();
                    break; // the last one: it ran what was left and stays up
                }
                // It claimed the poison job, so it must exit, if it has not yet. While the JVM thrashes towards
                // the OOM (seconds) the 2 s lease may lapse and the dying process's own maintenance reap it,
                // even to dead on the last attempt: the job can be settled before its claimant has exited.
                assertThat(after.attempts()).as(id + " claimed the poison job once").isEqualTo(attemptsBefore + 1);
                exits.add(worker.awaitExit(PROMPT_EXIT));
                Instant exitSeen = jobs.dbNow();
                assertThat(Duration.between(after.startedAt(), exitSeen)).as("from the claim to the exit of " + id)
                        .isLessThan(PROMPT_EXIT);
            }
        }
        assertThat(exits).as("exit status of each worker process that claimed the poison job")
                .hasSize(POISON_ATTEMPTS).containsOnly(FatalErrorPolicy.HALT_EXIT_CODE);
        Row dead = jobs.row(poison);
        assertThat(dead.state()).isEqualTo("dead");
        assertThat(dead.attempts()).isEqualTo(POISON_ATTEMPTS);
        assertThat(dead.lastError()).contains("lease expired");
        assertThat(others).allSatisfy(id -> assertThat(jobs.row(id).state()).as("job " + id).isEqualTo("done"));
    }

    private static boolean settled(Jobs jobs, long poison, List<Long> others) {
        return jobs.row(poison).state().equals("dead") && others.stream().allMatch(id -> jobs.row(id).state().equals("done"));
    }

    private static List<Long> enqueueOrdinary(Jobs jobs, int count) {
        List<Long> ids = new ArrayList<>();
        for (int i = 0; i < count; i++) ids.add(jobs.enqueue(i % 2 == 0 ? "noop" : "sleep", i % 2 == 0 ? "{}" : "{\"ms\": 200}"));
        return ids;
    }

    private static NewJob job(String task, String payload) {
        return NewJob.of(new TenantId("t1"), new QueueName("default"), TaskName.of(task), payload);
    }

    /** Runs {@code update} on job {@code id}, then returns the integer {@code check} selects for it. */
    private static int update(TestDatabase db, String update, long id, String check) {
        try (Connection c = db.dataSource().getConnection()) {
            try (var st = c.createStatement()) {
                st.execute("SET session_replication_role = replica"); // no triggers for this session's writes
            }
            try (PreparedStatement st = c.prepareStatement(update)) {
                st.setLong(1, id);
                assertThat(st.executeUpdate()).isEqualTo(1);
            }
            try (PreparedStatement st = c.prepareStatement(check)) {
                st.setLong(1, id);
                try (var rs = st.executeQuery()) {
                    rs.next();
                    return rs.getInt(1);
                }
            } finally {
                try (var st = c.createStatement()) {
                    st.execute("RESET session_replication_role"); // the connection goes back to the pool
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
