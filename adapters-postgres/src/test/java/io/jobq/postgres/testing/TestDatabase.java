package io.jobq.postgres.testing;

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

    /** Runs one SQL statement and returns the update count, for test set-up. */
    public int execute(String sql, Object... bindings) {
        return dsl().execute(sql, bindings);
    }
}
