package io.jobq.postgres;

import static io.jobq.postgres.StoreFixtures.W1;
import static io.jobq.postgres.StoreFixtures.claim;
import static io.jobq.postgres.StoreFixtures.job;
import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.postgres.testing.JdbcProxies;
import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The claim stays one index scan however many finished jobs pile up (design decision 10). The table
 * holds 100,000 done jobs and a few queued ones; the test runs a real claim through a recording
 * DataSource, so what it EXPLAINs is the exact statement and bind values the store sent, not a copy
 * that could drift from it.
 */
@ExtendWith(PostgresDatabaseExtension.class)
class ClaimPlanTest {

    static final int HISTORY = 100_000;

    TestDatabase db;

    @BeforeAll
    static void fillHistory(TestDatabase db) {
        db.emptyTables();
        db.execute("INSERT INTO tenants (queue, tenant) VALUES ('default', 'history')");
        db.execute("""
                INSERT INTO jobs (queue, tenant, task, state, vtime, attempts, started_at, finished_at)
                SELECT 'default', 'history', 'noop', 'done', g, 1, now(), now() FROM generate_series(1, {0}) g""", HISTORY);
        db.execute("ANALYZE jobs");
        db.execute("ANALYZE tenants");
    }

    @BeforeEach
    void queueAFew(TestDatabase db) {
        this.db = db;
        db.execute("DELETE FROM jobs WHERE state <> 'done'");
        PostgresJobStore store = new PostgresJobStore(db.dataSource());
        for (int i = 0; i < 5; i++) store.enqueue(job(i % 2 == 0 ? "a" : "b"));
    }

    /** One plan node: its type, and the relation and index it reads, where it has them. */
    record PlanNode(String type, String relation, String index) {}

    /** Runs one real single-queue claim with {@code order} and returns the plan of the statement it sent. */
    List<PlanNode> planOfClaim(ClaimOrder order) throws SQLException {
        StatementRecorder recorder = new StatementRecorder();
        PostgresJobStore store = new PostgresJobStore(recorder.wrap(db.dataSource()),
                PostgresJobStore.Options.DEFAULTS.withClaimOrder(order));

        assertThat(store.claim(claim(W1, 10))).as("the recorded claim claimed the queued jobs").hasSize(5);

        assertThat(recorder.statements).as("the claim is one statement").hasSize(1);
        Recorded claim = recorder.statements.getFirst();
        assertThat(claim.sql()).contains("FOR UPDATE SKIP LOCKED").contains("UPDATE jobq.jobs");
        String planJson;
        try (Connection c = db.dataSource().getConnection();
             PreparedStatement ps = c.prepareStatement("EXPLAIN (FORMAT JSON) " + claim.sql())) {
            for (var bind : claim.binds().entrySet()) ps.setObject(bind.getKey(), bind.getValue());
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                planJson = rs.getString(1);
            }
        }
        return planNodes(db, planJson);
    }

    /** The nodes of an {@code EXPLAIN (FORMAT JSON)} plan, in document order. */
    static List<PlanNode> planNodes(TestDatabase db, String planJson) {
        // let PostgreSQL walk its own JSON: every object that has a "Node Type" is a plan node
        return db.dsl().resultQuery("""
                        SELECT n->>'Node Type', n->>'Relation Name', n->>'Index Name'
                        FROM jsonb_path_query({0}::jsonb, 'strict $.**') AS n
                        WHERE jsonb_typeof(n) = 'object' AND n->>'Node Type' IS NOT NULL""", planJson)
                .fetch(r -> new PlanNode(r.get(0, String.class), r.get(1, String.class), r.get(2, String.class)));
    }

    @Test
    void theFairClaimIsAnIndexScanOfJobsRunnableWithNoSeqScanOrSort() throws SQLException {
        List<PlanNode> plan = planOfClaim(ClaimOrder.FAIR);

        assertThat(plan).as("plan nodes").contains(new PlanNode("Index Scan", "jobs", "jobs_runnable"));
        assertThat(plan).as("no sequential scan of jobs").noneMatch(n -> n.type().equals("Seq Scan") && "jobs".equals(n.relation()));
        // (queue = $1) plus the index order (vtime, id) serves ORDER BY vtime, id without sorting
        assertThat(plan).extracting(PlanNode::type).doesNotContain("Sort");
    }

    @Test
    void theFifoClaimIsAnIndexScanOfJobsRunnableFifo() throws SQLException {
        List<PlanNode> plan = planOfClaim(ClaimOrder.FIFO);

        assertThat(plan).as("plan nodes").contains(new PlanNode("Index Scan", "jobs", "jobs_runnable_fifo"));
        assertThat(plan).as("no sequential scan of jobs").noneMatch(n -> n.type().equals("Seq Scan") && "jobs".equals(n.relation()));
        assertThat(plan).extracting(PlanNode::type).doesNotContain("Sort");
    }

    // ---------------------------------------------------------------- recording DataSource

    /** The SQL of one prepared statement and the values bound to it, by parameter index. */
    record Recorded(String sql, Map<Integer, Object> binds) {}

    /**
     * Wraps a DataSource so that every statement prepared on its connections is recorded with the values
     * bound to it (setString, setInt, setLong, setObject, …), and otherwise behaves exactly as before.
     */
    static final class StatementRecorder {
        final List<Recorded> statements = new CopyOnWriteArrayList<>();

        DataSource wrap(DataSource target) {
            return JdbcProxies.afterEachCall(DataSource.class, target, (method, args, result) ->
                    method.getName().equals("getConnection") ? connection((Connection) result) : result);
        }

        private Connection connection(Connection target) {
            return JdbcProxies.afterEachCall(Connection.class, target, (method, args, result) -> {
                if (method.getName().equals("prepareStatement") && args != null && args[0] instanceof String sql) {
                    Recorded r = new Recorded(sql, new TreeMap<>());
                    statements.add(r);
                    return statement((PreparedStatement) result, r);
                }
                return result;
            });
        }

        private PreparedStatement statement(PreparedStatement target, Recorded recorded) {
            return JdbcProxies.afterEachCall(PreparedStatement.class, target, (method, args, result) -> {
                if (method.getName().startsWith("set") && args != null && args.length >= 2 && args[0] instanceof Integer index) {
                    recorded.binds().put(index, method.getName().equals("setNull") ? null : args[1]);
                }
                return result;
            });
        }
    }
}
