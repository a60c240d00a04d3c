package io.jobq.postgres;

import static io.jobq.postgres.StoreFixtures.W1;
import static io.jobq.postgres.StoreFixtures.claim;
import static io.jobq.postgres.StoreFixtures.job;
import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.application.port.OutcomeWrite;
import io.jobq.domain.job.Job;
import io.jobq.domain.lease.FencingToken;
import io.jobq.postgres.ClaimPlanTest.PlanNode;
import io.jobq.postgres.ClaimPlanTest.Recorded;
import io.jobq.postgres.ClaimPlanTest.StatementRecorder;
import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The statements that fence runs by token arrays (outcome, heartbeat, cancel check, release) look each job up
 * by primary key, whatever the statistics say: after an ANALYZE taken while no job ran (as after a bulk
 * enqueue), a fence written with the literal {@code state = 'running'} matched the partial index
 * {@code jobs_leases} and the planner walked that whole index, every lease since the last vacuum, per call
 * (see {@link OutcomeStatement}). Each statement is recorded as the store sends it and planned as PostgreSQL
 * plans it once pgjdbc has prepared it: generic, and custom for its first executions. Not here: the claim
 * loop's text of outcomes then a claim (one text of two statements, which PREPARE refuses; its outcome
 * statement is {@link OutcomeStatement#update}'s very text) and the quarantine (fenced the same way). (That the one-outcome
 * form keeps its generic plan instead of being planned per execution, {@code OutcomesThenClaimTest} checks.)
 */
@ExtendWith(PostgresDatabaseExtension.class)
class RunFencePlanTest {
    TestDatabase db;
    Job running;

    @BeforeAll
    static void historyAnalyzedWhileNothingRuns(TestDatabase db) {
        ClaimPlanTest.fillHistory(db); // 100,000 done jobs, then ANALYZE: no job runs yet
    }

    @BeforeEach
    void oneJobRuns(TestDatabase db) {
        this.db = db;
        db.execute("DELETE FROM jobs WHERE state <> 'done'");
        PostgresJobStore store = new PostgresJobStore(db.dataSource());
        store.enqueue(job("a"));
        running = store.claim(claim(W1, 1)).getFirst();
    }

    @ParameterizedTest
    @ValueSource(strings = {"force_generic_plan", "force_custom_plan"})
    void everyRunFenceLooksTheJobUpByKey(String planMode) throws SQLException {
        Map<String, BiConsumer<PostgresJobStore, FencingToken>> calls = Map.of(
                "cancel check", (s, token) -> s.cancelRequested(List.of(token)),
                "heartbeat", (s, token) -> s.heartbeat(List.of(token), Duration.ofSeconds(30)),
                "outcome", (s, token) -> s.complete(token, Optional.empty()),
                "release", (s, token) -> s.release(List.of(token)));
        for (var call : calls.entrySet()) {
            oneJobRuns(db); // the call before may have ended the run
            FencingToken token = running.fencingToken();
            Recorded sent = recordOne(s -> call.getValue().accept(s, token));
            List<PlanNode> plan = plan(sent, planMode);
            assertThat(plan).as(call.getKey() + " (" + planMode + ") reads jobs by key").contains(new PlanNode("Index Scan", "jobs", "jobs_pkey"));
            assertThat(plan).as(call.getKey() + " (" + planMode + ") never walks jobs_leases or the table")
                    .noneMatch(n -> "jobs_leases".equals(n.index()) || n.type().equals("Seq Scan") && "jobs".equals(n.relation()));
        }
    }

    /** Two outcomes in one statement: its form for several, over {@code unnest}. */
    @ParameterizedTest
    @ValueSource(strings = {"force_generic_plan", "force_custom_plan"})
    void theOutcomeStatementForSeveralLooksTheJobsUpByKey(String planMode) throws SQLException {
        PostgresJobStore store = new PostgresJobStore(db.dataSource());
        store.enqueue(job("b"));
        Job second = store.claim(claim(W1, 1)).getFirst();
        Recorded sent = recordOne(s -> s.recordOutcomes(List.of(new OutcomeWrite.Complete(running.fencingToken(), Optional.empty()),
                new OutcomeWrite.Complete(second.fencingToken(), Optional.empty()))));
        assertThat(sent.sql()).contains("unnest(");

        List<PlanNode> plan = plan(sent, planMode);
        assertThat(plan).contains(new PlanNode("Index Scan", "jobs", "jobs_pkey"));
        assertThat(plan).noneMatch(n -> "jobs_leases".equals(n.index()) || n.type().equals("Seq Scan") && "jobs".equals(n.relation()));
    }

    /** The cancel check, rewritten with the others, still answers only the run that holds the job. */
    @Test
    void theCancelCheckAnswersTheRunningTokenOnly() {
        PostgresJobStore store = new PostgresJobStore(db.dataSource());
        FencingToken token = running.fencingToken();
        FencingToken stale = new FencingToken(token.job(), token.worker(), token.attempt() + 1);
        assertThat(store.cancelRequested(List.of(token, stale))).as("before a cancel").isEmpty();

        store.cancel(token.job());

        assertThat(store.cancelRequested(List.of(token, stale))).containsExactly(token);
    }

    /** The wrong variant, so that {@link #everyRunFenceLooksTheJobUpByKey} can fail: the outcome statement fenced with the literal. */
    @Test
    void theLiteralFenceWalksJobsLeases() throws SQLException {
        Recorded sent = recordOne(s -> s.complete(running.fencingToken(), Optional.empty()));
        assertThat(sent.sql()).contains("j.state = o.running");
        Recorded literal = new Recorded(sent.sql().replace("j.state = o.running", "j.state = 'running'"), sent.binds());

        assertThat(plan(literal, "force_generic_plan")).as("the literal fence's plan")
                .anyMatch(n -> "jobs_leases".equals(n.index()));
    }

    /** Runs {@code call} on a store over a recording pool; the one statement it sent. */
    private Recorded recordOne(Consumer<PostgresJobStore> call) {
        StatementRecorder recorder = new StatementRecorder();
        call.accept(new PostgresJobStore(recorder.wrap(db.dataSource())));
        List<Recorded> fences = recorder.statements.stream().filter(r -> r.sql().contains("AS running")).toList();
        assertThat(fences).as("statements fencing by token arrays").hasSize(1);
        return fences.getFirst();
    }

    private static final Pattern PLACEHOLDER = Pattern.compile("\\?");

    /**
     * {@code sent}'s plan as a prepared statement in {@code planMode}: the JDBC text with {@code $n} for its
     * {@code ?}s (none of ours holds a {@code ?} elsewhere), executed with the recorded binds as literals.
     */
    private List<PlanNode> plan(Recorded sent, String planMode) throws SQLException {
        int[] n = {0};
        Matcher m = PLACEHOLDER.matcher(sent.sql());
        String prepared = m.replaceAll(r -> "\\$" + (++n[0]));
        StringBuilder args = new StringBuilder();
        for (int i = 1; i <= n[0]; i++) {
            Object v = sent.binds().get(i);
            if (i > 1) args.append(", ");
            args.append(v == null ? "NULL" : "'" + v.toString().replace("'", "''") + "'");
        }
        String json;
        // A connection of its own, closed after: the PREPAREd probe and the setting end with its session.
        try (Connection c = db.newConnection(); Statement st = c.createStatement()) {
            st.execute("SET plan_cache_mode = " + planMode);
            st.execute("PREPARE fence_probe AS " + prepared);
            try (ResultSet rs = st.executeQuery("EXPLAIN (FORMAT JSON) EXECUTE fence_probe(" + args + ")")) {
                rs.next();
                json = rs.getString(1);
            }
        }
        return ClaimPlanTest.planNodes(db, json);
    }
}
