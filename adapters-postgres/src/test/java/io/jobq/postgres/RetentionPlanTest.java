package io.jobq.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.postgres.ClaimPlanTest.PlanNode;
import io.jobq.postgres.ClaimPlanTest.Recorded;
import io.jobq.postgres.ClaimPlanTest.StatementRecorder;
import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The retention sweep reads jobs_finished, not the table: with 100,000 finished jobs none of which is past
 * its retention, a pass must not scan the table once per (queue, state) pair. EXPLAINs the exact statement
 * the store sent.
 */
@ExtendWith(PostgresDatabaseExtension.class)
class RetentionPlanTest {
    static final int HISTORY = 100_000;

    @BeforeAll
    static void fillHistory(TestDatabase db) {
        db.emptyTables();
        db.execute("INSERT INTO tenants (queue, tenant) SELECT 'q' || g, 'history' FROM generate_series(1, 5) g");
        db.execute("""
                INSERT INTO jobs (queue, tenant, task, state, attempts, started_at, finished_at)
                SELECT 'q' || (g % 5 + 1), 'history', 'noop', CASE WHEN g % 10 = 0 THEN 'dead' ELSE 'done' END, 1, now(), now()
                FROM generate_series(1, {0}) g""", HISTORY);
        db.execute("INSERT INTO jobs (queue, tenant, task, state, vtime) SELECT 'q1', 'history', 'noop', 'queued', g FROM generate_series(1, 100) g");
        db.execute("ANALYZE jobs");
    }

    @Test
    void theSweepReadsJobsFinishedAndNeverSeqScansJobs(TestDatabase db) throws SQLException {
        StatementRecorder recorder = new StatementRecorder();
        PostgresJobStore store = new PostgresJobStore(recorder.wrap(db.dataSource()));

        assertThat(store.deleteFinished(1000)).as("nothing is past its retention").isZero();

        Recorded sweep = recorder.statements.stream().filter(r -> r.sql().contains("DELETE FROM jobq.jobs")).findFirst().orElseThrow();
        String planJson;
        try (Connection c = db.dataSource().getConnection();
             PreparedStatement ps = c.prepareStatement("EXPLAIN (FORMAT JSON) " + sweep.sql())) {
            for (var bind : sweep.binds().entrySet()) ps.setObject(bind.getKey(), bind.getValue());
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                planJson = rs.getString(1);
            }
        }
        List<PlanNode> plan = db.dsl().resultQuery("""
                        SELECT n->>'Node Type', n->>'Relation Name', n->>'Index Name'
                        FROM jsonb_path_query({0}::jsonb, 'strict $.**') AS n
                        WHERE jsonb_typeof(n) = 'object' AND n->>'Node Type' IS NOT NULL""", planJson)
                .fetch(r -> new PlanNode(r.get(0, String.class), r.get(1, String.class), r.get(2, String.class)));

        // two probes of the loose index scan for the pairs, and the per-pair lookup of the oldest rows
        assertThat(plan).as("the per-pair lookup rides jobs_finished too").filteredOn(n -> "jobs_finished".equals(n.index())).hasSizeGreaterThanOrEqualTo(3);
        assertThat(plan).as("no sequential scan of jobs").noneMatch(n -> n.type().equals("Seq Scan") && "jobs".equals(n.relation()));
    }
}
