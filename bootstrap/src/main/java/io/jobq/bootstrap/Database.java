package io.jobq.bootstrap;

import com.zaxxer.hikari.HikariDataSource;
import io.jobq.postgres.PostgresPool;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Finds the database to use and opens the pool on it. */
final class Database {
    private static final Logger log = LoggerFactory.getLogger(Database.class);

    /** The database a local default connects to. */
    static final String DEFAULT_DATABASE = "jobq";

    private Database() {}

    /**
     * The configured database, or the local default: localhost:5432, database {@code jobq}, as the
     * current OS user or else {@code postgres}; the database is created when missing and the user may.
     *
     * @throws LauncherException when no database can be reached, saying what was tried
     */
    static DatabaseUrl resolve(Optional<DatabaseUrl> configured) {
        if (configured.isPresent()) return configured.get();
        Set<String> users = new LinkedHashSet<>();
        String osUser = System.getProperty("user.name");
        if (osUser != null && !osUser.isBlank()) users.add(osUser);
        users.add("postgres");
        StringBuilder tried = new StringBuilder();
        for (String user : users) {
            DatabaseUrl url = DatabaseUrl.parse("postgres://" + user + "@localhost:5432/" + DEFAULT_DATABASE);
            try (Connection c = DriverManager.getConnection(url.jdbcUrl())) {
                return url;
            } catch (SQLException e) {
                if ("3D000".equals(e.getSQLState()) && create(url)) return url;
                tried.append(tried.isEmpty() ? "" : "; ").append("as ").append(user).append(": ").append(e.getMessage());
            }
        }
        throw new LauncherException("DATABASE_URL is not set and no local PostgreSQL database '" + DEFAULT_DATABASE
                + "' could be reached on localhost:5432 (" + tried + "). Set DATABASE_URL, e.g. "
                + "postgres://user:password@host:5432/jobq");
    }

    /** Creates the default database through the server's {@code postgres} database; false if not allowed. */
    private static boolean create(DatabaseUrl url) {
        try (Connection c = DriverManager.getConnection(url.withDatabase("postgres").jdbcUrl());
             Statement st = c.createStatement()) {
            st.execute("CREATE DATABASE " + DEFAULT_DATABASE);
            log.info("created database {} on localhost:5432", DEFAULT_DATABASE);
            return true;
        } catch (SQLException e) {
            if ("42P04".equals(e.getSQLState())) return true; // created meanwhile by another process
            log.warn("cannot create database {}: {}", DEFAULT_DATABASE, e.getMessage());
            return false;
        }
    }

    static HikariDataSource pool(DatabaseUrl url, int size, String name) {
        return PostgresPool.create(url.jdbcUrl(), size, name, Duration.ofSeconds(5));
    }
}
