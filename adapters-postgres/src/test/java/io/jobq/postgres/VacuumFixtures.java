package io.jobq.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.jobq.postgres.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;

/** Test set-ups for cleanup: dead row versions made on purpose, and a snapshot held open in another session. */
final class VacuumFixtures {
    private VacuumFixtures() {}

    /**
     * Empties jobq's tables and switches autovacuum off for jobs (so nothing cleans up behind a test's back,
     * whatever the server says), in a session of its own that reports to the statistics before returning.
     * Not {@link TestDatabase#emptyTables()}: a pooled session reports its TRUNCATE up to ten seconds later,
     * and that late report zeroes the row counts of whatever was written in between.
     */
    static void reset(TestDatabase db) throws SQLException {
        try (Connection c = db.newConnection(); Statement st = c.createStatement()) {
            st.execute("TRUNCATE jobs, tenants RESTART IDENTITY");
            st.execute("ALTER TABLE jobs SET (autovacuum_enabled = false)");
            st.execute("SELECT pg_stat_force_next_flush()");
        }
    }

    /**
     * Inserts {@code n} queued jobs, then runs them (running, then done) as a claim and a completion would,
     * each step one statement: at least {@code n} dead row versions, more unless page pruning removed the
     * first step's. Its own session reports them to the statistics before returning (pg_stat_force_next_flush,
     * PostgreSQL 15+: the report goes out when the session next turns idle, before it answers).
     */
    static void churn(TestDatabase db, int n) throws SQLException {
        try (Connection c = db.newConnection(); Statement st = c.createStatement()) {
            st.execute("INSERT INTO tenants (queue, tenant) VALUES ('default', 'churn') ON CONFLICT DO NOTHING");
            try (PreparedStatement insert = c.prepareStatement("""
                    INSERT INTO jobs (queue, tenant, task, state, vtime)
                    SELECT 'default', 'churn', 'noop', 'queued', g FROM generate_series(1, ?) g""")) {
                insert.setInt(1, n);
                insert.execute();
            }
            st.execute("UPDATE jobs SET state = 'running', attempts = 1, locked_by = 'w', locked_until = now() + interval '1 minute'"
                    + " WHERE tenant = 'churn' AND state = 'queued'");
            st.execute("UPDATE jobs SET state = 'done', locked_by = NULL, locked_until = NULL, finished_at = now()"
                    + " WHERE tenant = 'churn' AND state = 'running'");
            st.execute("SELECT pg_stat_force_next_flush()");
        }
    }

    /**
     * A pool of 1 on the test database whose sessions first run {@code initSql}: e.g. {@code SET ROLE
     * pg_signal_backend} (a role that owns nothing and may not read other roles' statistics; SET ROLE needs
     * a superuser as test user, as on the local server and in Testcontainers). The caller closes it.
     */
    static HikariDataSource pool(TestDatabase db, String initSql) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(db.jdbcUrl());
        config.setMaximumPoolSize(1);
        config.setConnectionInitSql(initSql);
        return new HikariDataSource(config);
    }

    /** A REPEATABLE READ transaction that took its snapshot and then sits idle, as a forgotten session would. */
    static final class HeldSnapshot implements AutoCloseable {
        private final Connection session;
        /** {@link System#nanoTime()} just after the snapshot was taken: it has been held at least since. */
        final long heldSinceNanos;

        HeldSnapshot(TestDatabase db) throws SQLException {
            session = db.newConnection();
            session.setAutoCommit(false);
            session.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
            try (Statement st = session.createStatement()) {
                st.execute("SELECT 1");
            }
            heldSinceNanos = System.nanoTime();
        }

        /** Commits (releasing the snapshot) and closes the session. */
        @Override
        public void close() throws SQLException {
            try (session) {
                session.commit();
            }
        }
    }
}
