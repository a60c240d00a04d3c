package io.jobq.postgres.testing;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;

/**
 * A fresh, migrated database of one test class's own, on the test server.
 *
 * @param name the database name ({@code jobq_t_…})
 * @param jdbcUrl a JDBC URL for it, with credentials
 * @param dataSource a small HikariCP pool (at most 8) on it
 */
public record TestDatabase(String name, String jdbcUrl, HikariDataSource dataSource) {

    /** A jOOQ context on the pool, for assertions in tests. */
    public DSLContext dsl() {
        return DSL.using(dataSource, SQLDialect.POSTGRES);
    }

    /** A new connection outside the pool (for LISTEN, or to hold a transaction open); the caller closes it. */
    public Connection newConnection() throws SQLException {
        return DriverManager.getConnection(jdbcUrl);
    }

    /** Empties the queue's tables and restarts the job ids at 1: the set-up of a test sharing the class's database. */
    public void emptyTables() {
        execute("TRUNCATE jobs, tenants, queues, measured_runs, workers, schedules, schedule_ticks, api_keys, upkeep_turn RESTART IDENTITY");
    }

    /**
     * A new pool on this database whose connections use {@code isolation} (a HikariCP name such as
     * {@code "TRANSACTION_SERIALIZABLE"}), as on a server configured that way; the caller closes it.
     */
    public HikariDataSource newPool(int maxSize, String isolation) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl);
        config.setMaximumPoolSize(maxSize);
        config.setTransactionIsolation(isolation);
        return new HikariDataSource(config);
    }

    /** How many sessions on this database are waiting for a lock right now: to know a statement is blocked. */
    public long sessionsWaitingOnLocks() {
        return dsl().resultQuery("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                + "AND wait_event_type = 'Lock'").fetchSingle(0, Long.class);
    }

    /** The server process id of {@code c}'s session, to find it in {@code pg_stat_activity}. */
    public static int backendPid(Connection c) throws SQLException {
        try (var ps = c.prepareStatement("SELECT pg_backend_pid()"); var rs = ps.executeQuery()) {
            rs.next();
            return rs.getInt(1);
        }
    }

    /**
     * Whether some session waits for a lock that backend {@code pid} holds, asked on {@code looker} (a connection
     * of the caller's, so the question needs no pooled connection while the test holds them).
     */
    public static boolean blocksAnother(Connection looker, int pid) throws SQLException {
        try (var ps = looker.prepareStatement("SELECT count(*) FROM pg_stat_activity WHERE ? = ANY(pg_blocking_pids(pid))")) {
            ps.setInt(1, pid);
            try (var rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1) > 0;
            }
        }
    }

    /** Runs one SQL statement and returns the update count, for test set-up. */
    public int execute(String sql, Object... bindings) {
        return dsl().execute(sql, bindings);
    }
}
