package io.jobq.postgres.testing;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.configuration.FluentConfiguration;

/**
 * An application's own database as jobq finds it: the application's Flyway (default schema {@code public},
 * default history table) with its V1 creating {@code public.jobs} and {@code public.tenants}, and a V2 for its
 * next release; and sessions whose search_path names no jobq schema.
 */
public final class ApplicationDatabase {
    /** The application's scripts: V1 application tables, V2 orders. */
    public static final String LOCATION = "classpath:io/jobq/postgres/testing/application-migration";

    private ApplicationDatabase() {}

    /**
     * The application's Flyway on {@code db}, configured as an application would by default, on sessions with
     * the server's default search_path (Flyway's default schema is the session's first one).
     */
    public static FluentConfiguration flyway(TestDatabase db) {
        return Flyway.configure().dataSource(url(db), null, null).locations(LOCATION);
    }

    /** {@code db}'s URL without the test fixtures' currentSchema: the server's default search_path. */
    public static String url(TestDatabase db) {
        return db.jdbcUrl().replaceAll("[?&]currentSchema=[^&]*", "");
    }

    /**
     * A pool of 4 on {@code db} as the application's own: the server's default search_path; the caller closes it.
     */
    public static HikariDataSource pool(TestDatabase db) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url(db));
        config.setMaximumPoolSize(4);
        return new HikariDataSource(config);
    }

    /**
     * Turns {@code db} (a clone of the migrated template) into a database jobq has never seen, with the
     * application's V1 applied.
     */
    public static void beforeJobq(TestDatabase db) {
        db.execute("DROP SCHEMA jobq CASCADE");
        flyway(db).target("1").load().migrate();
    }
}
