package io.jobq.bench;

import com.zaxxer.hikari.HikariDataSource;
import io.jobq.bootstrap.DatabaseUrl;
import io.jobq.postgres.Migrations;
import io.jobq.postgres.PostgresPool;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The bench's own database, {@code jobq_bench}, on the server DATABASE_URL names: dropped and created
 * fresh at start (so no earlier run's rows skew a measurement), migrated with jobq's own Flyway
 * scripts, emptied between runs, and dropped at the end unless kept. The running jobq database is
 * never touched.
 */
public final class BenchDatabase implements AutoCloseable {
    /** The database every experiment runs in. */
    public static final String NAME = "jobq_bench";
    /** Used when neither --database-url nor DATABASE_URL is given. */
    public static final String DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/" + NAME;

    private final String name;
    private final DatabaseUrl url;
    private final DatabaseUrl admin;
    private final boolean keep;
    private final HikariDataSource control;
    /** How many {@link #checkpoint()} calls the server refused: the report says so when any was. */
    private final AtomicInteger checkpointsRefused = new AtomicInteger();

    private BenchDatabase(String name, DatabaseUrl url, DatabaseUrl admin, boolean keep, HikariDataSource control) {
        this.name = name;
        this.url = url;
        this.admin = admin;
        this.keep = keep;
        this.control = control;
    }

    /**
     * Drops and re-creates {@value #NAME} through the server's {@code postgres} database, then migrates it.
     *
     * @param serverUrl any database URL on the server to use (its database name is replaced)
     * @param keep whether {@link #close()} leaves the database in place for inspection
     */
    public static BenchDatabase createFresh(String serverUrl, boolean keep) throws SQLException {
        return create(DatabaseUrl.parse(serverUrl), NAME, keep);
    }

    /**
     * A second jobq database beside this one, {@value #NAME}_{@code suffix} on the same server, fresh and
     * migrated (as {@link #createFresh}), so that an experiment can alternate runs between two tables; its
     * {@link #close()} drops it, or keeps it with {@code --keep} as this one.
     */
    public BenchDatabase createMigratedSibling(String suffix) throws SQLException {
        return create(url, NAME + "_" + suffix, keep);
    }

    private static BenchDatabase create(DatabaseUrl server, String name, boolean keep) throws SQLException {
        DatabaseUrl url = server.withDatabase(name);
        DatabaseUrl admin = url.withDatabase("postgres");
        try (Connection c = DriverManager.getConnection(admin.jdbcUrl()); Statement st = c.createStatement()) {
            st.execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
            st.execute("CREATE DATABASE " + name);
            // jobq qualifies its own statements; the experiments' SQL (alternative claim queries, fixtures)
            // names jobq's tables unqualified, so every session of this database finds them first.
            st.execute("ALTER DATABASE " + name + " SET search_path = jobq, public");
        }
        HikariDataSource control = PostgresPool.create(url.jdbcUrl(), 4, "bench-control", Duration.ofSeconds(10));
        BenchDatabase db = new BenchDatabase(name, url, admin, keep, control);
        try {
            Migrations.migrate(control);
        } catch (RuntimeException e) {
            db.close(); // the pool, and the database unless --keep
            throw e;
        }
        return db;
    }

    /** The JDBC URL of this database, with credentials. */
    public String jdbcUrl() {
        return url.jdbcUrl();
    }

    /** The URL safe to print. */
    public String masked() {
        return url.masked();
    }

    /** A small pool for the harness itself: enqueueing, reading results, resetting. */
    public HikariDataSource control() {
        return control;
    }

    /** A new pool of its own, e.g. one per worker so workers never share connections. */
    public HikariDataSource pool(String name, int size) {
        HikariDataSource pool = PostgresPool.create(url.jdbcUrl(), size, name, Duration.ofSeconds(30));
        // Hold every connection at once now (Hikari's adder opens them one after another), so the timed part
        // of a run never includes connecting: the pool keeps only 2 idle on its own and would open the rest in
        // the run (a profile of 16 workers showed Hikari's connection adder, and the server forked a backend
        // per connection, while timed). Given back, they stay in the pool (far below its 10-minute idle timeout).
        List<Connection> opened = new ArrayList<>();
        try {
            for (int i = 0; i < size; i++) opened.add(pool.getConnection());
        } catch (SQLException e) {
            closeQuietly(opened);
            pool.close();
            throw new IllegalStateException("cannot connect to " + masked() + ": " + e.getMessage(), e);
        }
        closeQuietly(opened);
        return pool;
    }

    private static void closeQuietly(List<Connection> connections) {
        for (Connection c : connections) {
            try {
                c.close();
            } catch (SQLException ignored) {
                // a pooled connection's close only gives it back
            }
        }
    }

    /**
     * A fresh, empty database {@value #NAME}_{@code suffix} on the same server, for a peer's own tables
     * (nothing of jobq's in it): dropped first if a crashed run left it, and dropped again by
     * {@link Sibling#close()}.
     */
    public Sibling createSibling(String suffix) {
        String name = NAME + "_" + suffix;
        adminExecute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
        adminExecute("CREATE DATABASE " + name);
        return new Sibling(name, url.withDatabase(name).jdbcUrl());
    }

    /** A database of {@link #createSibling}: its JDBC URL, and {@link #close()} drops it. */
    public final class Sibling implements AutoCloseable {
        private final String name;
        private final String jdbcUrl;

        private Sibling(String name, String jdbcUrl) {
            this.name = name;
            this.jdbcUrl = jdbcUrl;
        }

        /** With credentials, as {@link BenchDatabase#jdbcUrl()}. */
        public String jdbcUrl() {
            return jdbcUrl;
        }

        /** A pool of its own on this database, connected once before it is returned. */
        public HikariDataSource pool(String poolName, int size) {
            HikariDataSource pool = PostgresPool.create(jdbcUrl, size, poolName, Duration.ofSeconds(30));
            try (Connection c = pool.getConnection()) {
                c.isValid(5);
            } catch (SQLException e) {
                pool.close();
                throw new IllegalStateException("cannot connect to " + name + ": " + e.getMessage(), e);
            }
            return pool;
        }

        @Override
        public void close() {
            adminExecute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
        }
    }

    private void adminExecute(String sql) {
        try (Connection c = DriverManager.getConnection(admin.jdbcUrl()); Statement st = c.createStatement()) {
            st.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException("bench SQL failed: " + sql + ": " + e.getMessage(), e);
        }
    }

    /** A plain connection outside any pool (the floor's bare loops). */
    public Connection connect() throws SQLException {
        return DriverManager.getConnection(url.jdbcUrl());
    }

    /** Empties jobs, tenants and queue settings between runs; every worker must be stopped. */
    public void reset() {
        execute("TRUNCATE jobs, tenants, queues, measured_runs, workers, schedules, schedule_ticks, api_keys, upkeep_turn");
        // The next run starts from clean tables and statistics, not from 20,000 dead tuples.
        execute("VACUUM ANALYZE jobs");
        execute("VACUUM ANALYZE tenants");
    }

    /**
     * Writes the server's dirty buffers out now ({@code CHECKPOINT}), so that a latency measured next does not
     * share the disk with the write-back of what an earlier experiment wrote (growth's million rows come just
     * before the pickup in {@code all}). Best effort: a role that may not checkpoint gets false, and the
     * measurement goes on.
     *
     * @return whether the checkpoint ran
     */
    public boolean checkpoint() {
        try (Connection c = control.getConnection(); Statement st = c.createStatement()) {
            st.execute("CHECKPOINT");
            return true;
        } catch (SQLException e) {
            checkpointsRefused.incrementAndGet();
            return false;
        }
    }

    /** How many {@link #checkpoint()} calls were refused so far (0 where the role may checkpoint). */
    public int checkpointsRefused() {
        return checkpointsRefused.get();
    }

    /** Runs one statement on the control pool. */
    public void execute(String sql) {
        try (Connection c = control.getConnection(); Statement st = c.createStatement()) {
            st.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException("bench SQL failed: " + sql + ": " + e.getMessage(), e);
        }
    }

    /** The first column of the first row of {@code sql}, as a long (0 when NULL). */
    public long queryLong(String sql) {
        try (Connection c = control.getConnection(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            return rs.next() ? rs.getLong(1) : 0;
        } catch (SQLException e) {
            throw new IllegalStateException("bench SQL failed: " + sql + ": " + e.getMessage(), e);
        }
    }

    /** The first column of every row of {@code sql}, as doubles. */
    public List<Double> queryDoubles(String sql) {
        try (Connection c = control.getConnection(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            List<Double> out = new ArrayList<>();
            while (rs.next()) out.add(rs.getDouble(1));
            return out;
        } catch (SQLException e) {
            throw new IllegalStateException("bench SQL failed: " + sql + ": " + e.getMessage(), e);
        }
    }

    /** The server's version and the settings that decide commit speed, by name. */
    public Map<String, String> serverFacts() {
        Map<String, String> out = new LinkedHashMap<>();
        try (Connection c = control.getConnection(); Statement st = c.createStatement()) {
            try (ResultSet rs = st.executeQuery("SELECT version()")) {
                rs.next();
                out.put("version", rs.getString(1));
            }
            try (ResultSet rs = st.executeQuery("""
                    SELECT name, setting || coalesce(' ' || unit, '') FROM pg_settings
                    WHERE name IN ('synchronous_commit', 'fsync', 'autovacuum', 'wal_sync_method', 'full_page_writes',
                                   'shared_buffers', 'max_connections', 'commit_delay', 'wal_buffers')
                    ORDER BY name""")) {
                while (rs.next()) out.put(rs.getString(1), rs.getString(2));
            }
            // pg_settings gives shared_buffers in 8kB pages; SHOW gives the readable form.
            try (ResultSet rs = st.executeQuery("SHOW shared_buffers")) {
                rs.next();
                out.put("shared_buffers", rs.getString(1));
            }
        } catch (SQLException e) {
            out.put("error", e.getMessage());
        }
        return out;
    }

    @Override
    public void close() {
        control.close();
        if (keep) return;
        try (Connection c = DriverManager.getConnection(admin.jdbcUrl()); Statement st = c.createStatement()) {
            st.execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
        } catch (SQLException e) {
            System.err.println("jobq-bench: could not drop " + name + ": " + e.getMessage());
        }
    }
}
