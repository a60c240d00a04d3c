package io.jobq.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.application.fake.Await;
import io.jobq.postgres.testing.TestDatabase;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 11, item 5: operators see bloat coming. A snapshot held in another session shows in /metrics as a
 * session horizon whose age rises while it is held and falls back once it ends; churn shows as dead row
 * versions of jobs.
 */
class BloatMetricsTest extends ApiTestCase {
    static final String SESSION_AGE = "jobq_xmin_horizon_age_seconds{source=\"session\"}";

    /** Gauges refreshed on every scrape, so a test sees its own writes. */
    @Override
    HttpSettings settings() {
        return HttpSettings.builder().metricsMaxAge(Duration.ZERO).build();
    }

    /**
     * Not emptied between tests: TRUNCATE gives jobs a new file whose statistics start over, and the
     * live and dead row counts read here must keep what the test wrote.
     */
    @Override
    void emptyTables() {}

    @BeforeAll
    void noAutovacuum(TestDatabase db) {
        // nothing cleans jobs behind the test's back, whether the server's autovacuum is on or off
        db.execute("ALTER TABLE jobs SET (autovacuum_enabled = false)");
    }

    double gauge(String series) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(series) + " (\\S+)$").matcher(f.client().get("/metrics").text());
        assertThat(m.find()).as("%s in /metrics", series).isTrue();
        return Double.parseDouble(m.group(1));
    }

    @Test
    void theSessionHorizonAgeRisesWhileASnapshotIsHeldAndFallsBackAfter() throws Exception {
        double held;
        try (Connection holder = f.db().newConnection()) {
            holder.setAutoCommit(false);
            holder.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
            try (Statement st = holder.createStatement()) {
                st.execute("SELECT 1"); // the snapshot is taken; the session then sits idle in transaction
            }
            long since = System.nanoTime();
            double first = gauge(SESSION_AGE);
            f.client().post("/jobs", "{\"task\": \"t\"}"); // a write: one more xid behind the snapshot
            Await.until(Duration.ofSeconds(10), "a second of holding", () -> System.nanoTime() - since > 1_000_000_000L);
            double heldSeconds = (System.nanoTime() - since) / 1e9;
            held = gauge(SESSION_AGE);
            assertThat(held).isGreaterThan(first).isGreaterThanOrEqualTo(heldSeconds);
            assertThat(gauge("jobq_xmin_horizon_age_xids{source=\"session\"}")).isGreaterThanOrEqualTo(1);
            holder.commit();
        }
        assertThat(gauge(SESSION_AGE)).isLessThan(held);
    }

    @Test
    void deadRowVersionsOfJobsAndTheAutovacuumSwitchAreExported() throws Exception {
        double before = gauge("jobq_table_dead_tuples{table=\"jobs\"}");
        try (Connection c = f.db().newConnection(); Statement st = c.createStatement()) {
            st.execute("INSERT INTO tenants (queue, tenant) VALUES ('default', 'churn') ON CONFLICT DO NOTHING");
            st.execute("INSERT INTO jobs (queue, tenant, task, state, vtime) SELECT 'default', 'churn', 'noop', 'queued', g"
                    + " FROM generate_series(1, 500) g");
            st.execute("UPDATE jobs SET state = 'dead', finished_at = now() WHERE tenant = 'churn'");
            st.execute("SELECT pg_stat_force_next_flush()"); // reported before this statement answers
        }
        Await.until(Duration.ofSeconds(30), "500 more dead row versions in /metrics",
                () -> gauge("jobq_table_dead_tuples{table=\"jobs\"}") >= before + 500);
        assertThat(gauge("jobq_table_live_tuples{table=\"jobs\"}")).isGreaterThanOrEqualTo(500);
        assertThat(gauge("jobq_table_autovacuum_enabled{table=\"jobs\"}")).isZero();
        assertThat(gauge("jobq_table_vacuum_threshold_tuples{table=\"jobs\"}")).isGreaterThanOrEqualTo(1000);
        assertThat(gauge("jobq_table_last_vacuum_timestamp_seconds{table=\"jobs\"}")).isGreaterThanOrEqualTo(0);
        for (String source : new String[] {"prepared_transaction", "replication_slot", "standby"}) {
            assertThat(gauge("jobq_xmin_horizon_age_xids{source=\"" + source + "\"}")).isGreaterThanOrEqualTo(0);
        }
    }
}
