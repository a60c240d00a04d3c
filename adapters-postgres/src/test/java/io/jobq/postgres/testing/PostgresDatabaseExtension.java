package io.jobq.postgres.testing;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.jobq.postgres.Migrations;
import java.net.URI;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.testcontainers.postgresql.PostgreSQLContainer;

/**
 * Gives each test class a fresh PostgreSQL database of its own, so classes can run in parallel
 * without seeing each other's rows or NOTIFY channels (channels are per database).
 *
 * <ul>
 *   <li>Server: {@code JOBQ_TEST_DATABASE_URL} (a JDBC URL of a database on a server where the user may
 *       CREATE DATABASE) if set; otherwise one Testcontainers {@code postgres:16-alpine} per JVM. Neither
 *       available: the test fails, saying how to provide one. Never skipped.
 *   <li>Once per JVM: databases left by runs older than 6 hours are dropped; a template
 *       {@code jobq_tmpl_<run>} is created and Flyway-migrated, and every connection to it closed; it is
 *       dropped when the JVM exits.
 *   <li>Per test class: {@code CREATE DATABASE jobq_t_<run>_<n> TEMPLATE jobq_tmpl_<run>} (cloning skips
 *       Flyway per class), a pool of at most 8 connections; after the class, the pool is closed and the
 *       database dropped {@code WITH (FORCE)}.
 * </ul>
 *
 * Use with {@code @ExtendWith(PostgresDatabaseExtension.class)} and a {@link TestDatabase} parameter on a
 * {@code @BeforeAll}/{@code @BeforeEach} method, constructor or test.
 */
public final class PostgresDatabaseExtension implements BeforeAllCallback, ParameterResolver {

    /** Environment variable naming the test server. */
    public static final String ENV = "JOBQ_TEST_DATABASE_URL";

    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(PostgresDatabaseExtension.class);
    private static final AtomicInteger COUNTER = new AtomicInteger();
    private static final String RUN_ID = Instant.now().getEpochSecond() + "_" + ThreadLocalRandom.current().nextInt(1000, 9999);
    private static final long STALE_AFTER_SECONDS = 6 * 3600;

    /** CREATE DATABASE … TEMPLATE fails while anyone else uses the template: one clone at a time per JVM. */
    private static final Object TEMPLATE_LOCK = new Object();
    private static volatile Server server;

    /** The admin side of the test server: where databases are created and dropped. */
    private record Server(String adminUrl, String template) {}

    @Override
    public void beforeAll(ExtensionContext context) {
        database(context);
    }

    @Override
    public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        return parameterContext.getParameter().getType() == TestDatabase.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext)
            throws ParameterResolutionException {
        return database(extensionContext);
    }

    /** The class's database, created on first use and dropped when the class's extension context closes. */
    private static TestDatabase database(ExtensionContext context) {
        ExtensionContext classContext = classContext(context);
        return classContext.getStore(NS)
                .getOrComputeIfAbsent("database", k -> new ClassDatabase(createDatabase()), ClassDatabase.class)
                .database();
    }

    private static ExtensionContext classContext(ExtensionContext context) {
        ExtensionContext c = context;
        // @Nested classes share their outermost test class's database.
        while (c.getParent().isPresent() && c.getParent().get().getTestClass().isPresent()) c = c.getParent().get();
        return c;
    }

    /** Drops the database when JUnit closes the class's store. */
    private record ClassDatabase(TestDatabase database) implements AutoCloseable {
        @Override
        public void close() throws SQLException {
            database.dataSource().close();
            try (Connection admin = DriverManager.getConnection(server().adminUrl());
                 Statement st = admin.createStatement()) {
                st.execute(dropStatement(database.name()));
            }
        }
    }

    private static TestDatabase createDatabase() {
        Server s = server();
        String name = "jobq_t_" + RUN_ID + "_" + COUNTER.incrementAndGet();
        synchronized (TEMPLATE_LOCK) {
            try (Connection admin = DriverManager.getConnection(s.adminUrl()); Statement st = admin.createStatement()) {
                st.execute("CREATE DATABASE " + name + " TEMPLATE " + s.template());
            } catch (SQLException e) {
                throw new IllegalStateException("cannot create test database " + name + ": " + e.getMessage(), e);
            }
        }
        // Tests' own SQL names jobq's tables unqualified; jobq's code qualifies every name itself, which
        // ApplicationDatabaseTest checks on a search_path where public.jobs is an application's table.
        String url = withParameter(withDatabase(s.adminUrl(), name), "currentSchema", "jobq,public");
        return new TestDatabase(name, url, pool(url, name, 8));
    }

    private static Server server() {
        Server s = server;
        if (s != null) return s;
        synchronized (PostgresDatabaseExtension.class) {
            if (server == null) server = startServer();
            return server;
        }
    }

    private static Server startServer() {
        String adminUrl = System.getenv(ENV);
        if (adminUrl == null || adminUrl.isBlank()) adminUrl = startContainer();
        String template = "jobq_tmpl_" + RUN_ID;
        try (Connection admin = DriverManager.getConnection(adminUrl); Statement st = admin.createStatement()) {
            dropStale(admin);
            st.execute("CREATE DATABASE " + template);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot reach the test PostgreSQL at " + ENV + "=" + redact(adminUrl)
                    + " (or create a database there): " + e.getMessage()
                    + ". The user needs the CREATEDB privilege.", e);
        }
        // Dropped when this JVM exits: on a shared server each test run otherwise left its template behind until
        // a run six hours later dropped it as stale (a run killed before its hooks still is, that way).
        String admin = adminUrl;
        Runtime.getRuntime().addShutdownHook(new Thread(() -> dropQuietly(admin, template), "drop-test-template"));
        try (HikariDataSource ds = pool(withDatabase(adminUrl, template), template, 2)) {
            Migrations.migrate(ds);
        }
        return new Server(adminUrl, template);
    }

    private static String startContainer() {
        try {
            PostgreSQLContainer container = new PostgreSQLContainer("postgres:16-alpine");
            container.start();
            Runtime.getRuntime().addShutdownHook(new Thread(container::stop, "stop-test-postgres"));
            String url = container.getJdbcUrl();
            return url + (url.contains("?") ? "&" : "?") + "user=" + container.getUsername() + "&password="
                    + container.getPassword();
        } catch (RuntimeException | LinkageError e) {
            throw new IllegalStateException("""
                    No PostgreSQL for the database tests. Either set %s to a JDBC URL of a server where the user \
                    may CREATE DATABASE, e.g. %s='jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres', \
                    or run a Docker engine so Testcontainers can start postgres:16-alpine. \
                    Testcontainers said: %s""".formatted(ENV, ENV, e.getMessage()), e);
        }
    }

    /** Databases from runs older than STALE_AFTER_SECONDS: a crashed run never cleaned up. Others may be in use. */
    private static void dropStale(Connection admin) throws SQLException {
        List<String> stale = new ArrayList<>();
        long now = Instant.now().getEpochSecond();
        try (Statement st = admin.createStatement();
             ResultSet rs = st.executeQuery("SELECT datname FROM pg_database WHERE datname LIKE 'jobq\\_t\\_%' OR datname LIKE 'jobq\\_tmpl\\_%'")) {
            while (rs.next()) {
                String n = rs.getString(1);
                String[] parts = n.split("_");
                try {
                    long created = Long.parseLong(parts[2]);
                    if (now - created > STALE_AFTER_SECONDS) stale.add(n);
                } catch (RuntimeException ignored) {
                    // not one of ours after all
                }
            }
        }
        try (Statement st = admin.createStatement()) {
            for (String n : stale) st.execute(dropStatement(n));
        }
    }

    /** {@code DROP DATABASE … WITH (FORCE)}, at JVM exit: a failure is printed, nothing more can be done then. */
    private static void dropQuietly(String adminUrl, String database) {
        try (Connection admin = DriverManager.getConnection(adminUrl); Statement st = admin.createStatement()) {
            st.execute(dropStatement(database));
        } catch (SQLException e) {
            System.err.println("could not drop the test template " + database + ": " + e.getMessage());
        }
    }

    /** Drops a test database even while connections to it remain (a pool a failed test left open). */
    private static String dropStatement(String database) {
        return "DROP DATABASE IF EXISTS " + database + " WITH (FORCE)";
    }

    private static HikariDataSource pool(String url, String name, int size) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(0);
        config.setPoolName(name);
        config.setConnectionTimeout(10_000);
        return new HikariDataSource(config);
    }

    /** {@code jdbc:postgresql://h:p/admin?x} → {@code jdbc:postgresql://h:p/<database>?x}. */
    static String withDatabase(String jdbcUrl, String database) {
        if (!jdbcUrl.startsWith("jdbc:")) throw new IllegalArgumentException(ENV + " must be a jdbc:postgresql:// URL");
        URI uri = URI.create(jdbcUrl.substring("jdbc:".length()));
        String query = uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery();
        return "jdbc:" + uri.getScheme() + "://" + uri.getRawAuthority() + "/" + database + query;
    }

    /** {@code url} with {@code key=value} appended to its query. */
    public static String withParameter(String url, String key, String value) {
        return url + (url.contains("?") ? "&" : "?") + key + "=" + java.net.URLEncoder.encode(value, java.nio.charset.StandardCharsets.UTF_8);
    }

    private static String redact(String url) {
        return url.replaceAll("password=[^&]*", "password=***");
    }
}
