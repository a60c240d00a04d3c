package io.jobq.bench;

import static io.jobq.bench.ClaimStrategy.SKIP_LOCKED;
import static io.jobq.bench.ClaimStrategy.SKIP_LOCKED_BATCH;
import static io.jobq.bench.ClaimStrategy.WAIT;
import static io.jobq.bench.FloorExperiment.completeSql;
import static io.jobq.bench.FloorExperiment.claimSql;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import io.jobq.application.port.ClaimRequest;
import io.jobq.application.port.FencedWrite;
import io.jobq.application.port.OutcomeWrite;
import io.jobq.application.port.OutcomesThenClaim;
import io.jobq.application.port.NewJobBatch;
import io.jobq.application.worker.WorkerSettings;
import io.jobq.bench.SqlRecorder.Execution;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.lease.WorkerId;
import io.jobq.domain.tenant.TenantId;
import io.jobq.postgres.PostgresJobStore;
import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntFunction;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The floor must run the store's own claim and complete, or "jobq's throughput as a fraction of the
 * floor" compares jobq with something else. FloorExperiment's statements are copies (it is a bare JDBC
 * loop, with no store to ask), so this test records what the real {@link PostgresJobStore} sends to
 * pgjdbc for a claim under each {@link ClaimStrategy} and for the outcomes a claim carries (the claim loop's
 * call, its text split into its two statements, the transaction's bound and COMMIT around them dropped), records what the floor's loop
 * sends for the same job, and requires the two to be the same statements: the same SQL text (up to
 * whitespace) executed with the same parameters, bound by the same setters, in the same order.
 *
 * <p>Each side drains one queued job in a freshly emptied table (identities restarted): claim, complete,
 * claim again and find nothing; and two jobs in one batched claim, for the outcome statement's form for
 * several. The sequence is deterministic and the job ids are the same on both sides, so the parameters are
 * compared whole, ids included; the worker name is the same too.
 */
@ExtendWith(PostgresDatabaseExtension.class)
class FloorStatementsTest {

    private static final String WORKER = "floor-0";

    @ParameterizedTest
    @EnumSource(ClaimStrategy.class)
    void theFloorRunsTheStoresClaimAndComplete(ClaimStrategy s, TestDatabase db) throws SQLException {
        List<Execution> store = storeRun(db, s, 1);
        // What the comparison covers: claim, complete, the empty claim that ends a drain.
        assertThat(store).hasSize(3);
        assertThat(store.get(store.size() - 2).sql()).contains("UPDATE jobq.jobs j SET");

        assertSameStatements(floorRun(db, s, claimSql(s), completeSql(s), s.batch, 1), store);
    }

    /** Two jobs in one batched claim: their outcomes in one statement, the form for more than one. */
    @Test
    void theFloorRunsTheStoresOutcomeStatementForSeveral(TestDatabase db) throws SQLException {
        List<Execution> store = storeRun(db, SKIP_LOCKED_BATCH, 2);
        assertThat(store).hasSize(3);
        assertThat(store.get(1).sql()).contains("unnest(");

        assertSameStatements(floorRun(db, SKIP_LOCKED_BATCH, claimSql(SKIP_LOCKED_BATCH), completeSql(SKIP_LOCKED_BATCH),
                SKIP_LOCKED_BATCH.batch, 2), store);
    }


    /** Drifts the guard must catch: each changes the floor's claim or complete and nothing else. */
    static Stream<Arguments> drifts() {
        return Stream.of(
                arguments(SKIP_LOCKED, "claim in id order",
                        claimSql(SKIP_LOCKED).replace("ORDER BY vtime, id", "ORDER BY id"), completeSql(SKIP_LOCKED), 1),
                arguments(SKIP_LOCKED_BATCH, "claim without SKIP LOCKED",
                        claimSql(SKIP_LOCKED_BATCH).replace(" SKIP LOCKED", ""), completeSql(SKIP_LOCKED_BATCH), 10),
                arguments(WAIT, "claim with SKIP LOCKED where the store waits",
                        claimSql(SKIP_LOCKED), completeSql(WAIT), 1),
                arguments(SKIP_LOCKED_BATCH, "claim with another limit",
                        claimSql(SKIP_LOCKED_BATCH).replace("LIMIT 10", "LIMIT 5"), completeSql(SKIP_LOCKED_BATCH), 10),
                // Harmless to one job, yet a different statement: the floor must not "tidy" the store's text.
                arguments(SKIP_LOCKED, "complete skipping a held row",
                        claimSql(SKIP_LOCKED), (IntFunction<String>) n -> completeSql(SKIP_LOCKED, n)
                                .replaceAll("ORDER BY j.id\\s+FOR NO KEY UPDATE OF j", "FOR NO KEY UPDATE OF j SKIP LOCKED"), 1),
                // The fence by literal matches the partial index jobs_leases (see OutcomeStatement).
                arguments(WAIT, "complete fenced by the literal 'running'",
                        claimSql(WAIT), (IntFunction<String>) n -> completeSql(WAIT, n).replace("j.state = o.running", "j.state = 'running'"), 1),
                arguments(SKIP_LOCKED, "one outcome completed by the statement for several",
                        claimSql(SKIP_LOCKED), (IntFunction<String>) n -> completeSql(SKIP_LOCKED, 2), 1));
    }

    @ParameterizedTest(name = "{1}")
    @MethodSource("drifts")
    void aDriftedStatementIsCaught(ClaimStrategy s, String drift, String claimSql, IntFunction<String> completeSql,
                                   int batch, TestDatabase db) throws SQLException {
        // The mutation must have changed something, or this test would prove nothing.
        assertThat(List.of(claimSql, completeSql.apply(1), batch)).isNotEqualTo(List.of(claimSql(s), completeSql(s, 1), s.batch));
        List<Execution> store = storeRun(db, s, 1);
        List<Execution> floor = floorRun(db, s, claimSql, completeSql, batch, 1);

        assertThatThrownBy(() -> assertSameStatements(floor, store))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("not the store's");
    }

    /** The guard itself: the same statements, in the same order, up to whitespace in their text. */
    private static void assertSameStatements(List<Execution> floor, List<Execution> store) {
        assertThat(normalised(floor))
                .as("the floor's statements are not the store's; copy the store's (expected) into FloorExperiment")
                .isEqualTo(normalised(store));
    }

    private static List<Execution> normalised(List<Execution> executions) {
        return executions.stream().map(e -> new Execution(e.sql().strip().replaceAll("\\s+", " "), e.binds())).toList();
    }

    /** The store, as the throughput experiment configures it for {@code s}, drains {@code jobs} jobs claimed at once. */
    private static List<Execution> storeRun(TestDatabase db, ClaimStrategy s, int jobs) {
        queuedJobs(db, jobs);
        SqlRecorder recorder = new SqlRecorder();
        PostgresJobStore store = new PostgresJobStore(recorder.wrap(db.dataSource()), s.storeOptions());
        // The worker's claim with the throughput experiment's settings: default queues and lease, batch b.
        ClaimRequest request = new ClaimRequest(WorkerSettings.DEFAULTS.queues(), WorkerId.of(WORKER), s.batch,
                WorkerSettings.DEFAULTS.lease());
        List<Job> claimed = store.claim(request);
        assertThat(claimed).hasSize(jobs);
        // A no-op job's outcome: no result, as the floor completes it; all of one claim's in one statement,
        // carried by the next claim as the worker's claim loop sends them (it finds nothing: the drain's end).
        List<OutcomeWrite> outcomes = claimed.stream()
                .<OutcomeWrite>map(j -> new OutcomeWrite.Complete(j.fencingToken(), Optional.empty())).toList();
        OutcomesThenClaim both = store.recordOutcomesThenClaim(outcomes, request);
        assertThat(both.answers()).allMatch(a -> a instanceof FencedWrite.Applied);
        assertThat(both.claimed()).isEmpty();
        return asStatements(recorder.executions());
    }

    /**
     * The store's executions as the statements the floor sends one by one: a text of outcomes then a claim
     * split into its two statements, its binds split after the first statement's; the lock-wait bound before
     * them and the COMMIT after them, which begin and end the text's transaction, dropped (the floor
     * runs its two statements in auto-commit, and no transaction of its holds a row for long).
     */
    private static List<Execution> asStatements(List<Execution> executions) {
        List<Execution> out = new ArrayList<>();
        for (Execution e : executions) {
            if (!e.sql().contains(";\n")) {
                out.add(e);
                continue;
            }
            int bindsBefore = 0;
            for (String part : e.sql().split(";\n")) {
                if (part.startsWith("SET LOCAL lock_timeout") || part.equals("COMMIT")) {
                    assertThat(part).as("no binds in the text around the statements").doesNotContain("?");
                    continue;
                }
                int binds = (int) part.chars().filter(ch -> ch == '?').count();
                out.add(new Execution(part, renumbered(e.binds().subList(bindsBefore, bindsBefore + binds), bindsBefore)));
                bindsBefore += binds;
            }
            assertThat(bindsBefore).as("every bind of the text in one of its statements").isEqualTo(e.binds().size());
        }
        return out;
    }

    /** Binds recorded as {@code $index=…}, their indexes lowered by {@code by}. */
    private static List<String> renumbered(List<String> binds, int by) {
        return binds.stream().map(b -> {
            int eq = b.indexOf('=');
            return "$" + (Integer.parseInt(b.substring(1, eq)) - by) + b.substring(eq);
        }).toList();
    }

    /** FloorExperiment's loop, on one plain connection as in the experiment, drains {@code jobs} jobs. */
    private static List<Execution> floorRun(TestDatabase db, ClaimStrategy s, String claimSql, IntFunction<String> completeSql,
                                            int batch, int jobs) throws SQLException {
        queuedJobs(db, jobs);
        SqlRecorder recorder = new SqlRecorder();
        AtomicLong completed = new AtomicLong();
        try (Connection c = recorder.wrap(db.newConnection())) {
            FloorExperiment.loop(c, claimSql, completeSql, WORKER, batch, completed, new AtomicLong(), new AtomicLong(), () -> false);
        }
        assertThat(completed).as("jobs the floor completed (%s)", s).hasValue(jobs);
        return recorder.executions();
    }

    /** An emptied table with identities restarted, and {@code jobs} queued no-op jobs of the bench's tenant. */
    private static void queuedJobs(TestDatabase db, int jobs) {
        db.emptyTables();
        new PostgresJobStore(db.dataSource()).enqueueBatch(new NewJobBatch(TenantId.of("bench"), QueueName.DEFAULT,
                NoopJobs.NOOP, java.util.Collections.nCopies(jobs, "{}"), Job.DEFAULT_MAX_ATTEMPTS, Duration.ZERO));
    }
}
