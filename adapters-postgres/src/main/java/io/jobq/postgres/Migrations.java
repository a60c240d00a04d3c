package io.jobq.postgres;

import io.jobq.application.port.JobQueueException;
import io.jobq.application.port.StoreUnavailableException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.MigrationInfo;
import org.flywaydb.core.api.MigrationState;

/**
 * Applies and checks jobq's schema: the Flyway scripts at {@value #LOCATION} (a location no application
 * shares; jOOQ's classes are generated from the same files), applied into jobq's own {@link JobqSchema}
 * with its own history table there ({@code <schema>.flyway_schema_history}). The application's schemas,
 * tables and Flyway history are never read or written, so an application's own Flyway keeps working on the
 * same database before and after.
 *
 * <p>Upgrading from jobq 0.1, which kept its tables and history in {@code public}: run with schema
 * {@code public} ({@code JOBQ_SCHEMA=public}) and everything stays where it is. Migrating into a new schema
 * while 0.1's tables are in {@code public} is refused (their jobs would be left behind), naming that setting.
 */
public final class Migrations {
    /** Where jobq's migration scripts are on the classpath. */
    public static final String LOCATION = "classpath:io/jobq/postgres/migration";

    private Migrations() {}

    /** {@link #migrate(DataSource, JobqSchema)} into the default schema {@code jobq}. */
    public static int migrate(DataSource dataSource) {
        return migrate(dataSource, JobqSchema.DEFAULT);
    }

    /**
     * Brings the schema up to date, creating it if missing. Safe to run from several processes at once
     * (Flyway takes an advisory lock).
     *
     * @return how many migrations were applied (0 when already current)
     * @throws JobQueueException if a migration fails, or if jobq 0.1's tables are in {@code public} and the
     *     schema is another (the message says how to keep using them)
     */
    public static int migrate(DataSource dataSource, JobqSchema schema) {
        refuseToLeaveLegacyJobsBehind(dataSource, schema);
        try {
            return flyway(dataSource, schema).migrate().migrationsExecuted;
        } catch (RuntimeException e) {
            throw failure("schema migration failed", e);
        }
    }

    /** {@link #requireCurrent(DataSource, JobqSchema)} for the default schema. */
    public static void requireCurrent(DataSource dataSource) {
        requireCurrent(dataSource, JobqSchema.DEFAULT);
    }

    /**
     * Throws unless every migration this build knows is applied, for roles that must not change the
     * schema (workers).
     *
     * @throws JobQueueException naming the pending migrations and how to apply them
     */
    public static void requireCurrent(DataSource dataSource, JobqSchema schema) {
        MigrationInfo[] pending;
        try {
            pending = flyway(dataSource, schema).info().pending();
        } catch (RuntimeException e) {
            throw failure("cannot read the schema version", e);
        }
        if (pending.length > 0) {
            StringBuilder names = new StringBuilder();
            for (MigrationInfo m : pending) {
                if (m.getState() == MigrationState.PENDING) names.append(names.isEmpty() ? "" : ", ").append(m.getVersion());
            }
            throw new JobQueueException("the database schema " + schema.name() + " is not migrated (pending: " + names
                    + "); run `jobq migrate` (or start the api role, which migrates) first");
        }
    }

    private static Flyway flyway(DataSource dataSource, JobqSchema schema) {
        return Flyway.configure()
                .dataSource(dataSource)
                .locations(LOCATION)
                .failOnMissingLocations(true)
                .schemas(schema.name())
                .defaultSchema(schema.name())
                .createSchemas(true)
                // Another schema may hold tables (the application's): jobq's own schema being empty is what counts.
                .baselineOnMigrate(false)
                .load();
    }

    /**
     * jobq 0.1 put its tables in {@code public}, recorded in {@code public.flyway_schema_history} as version 1
     * "jobs and tenants". If they are there while {@code schema} has no jobq yet, migrating would start an
     * empty queue beside them.
     */
    private static void refuseToLeaveLegacyJobsBehind(DataSource dataSource, JobqSchema schema) {
        if (schema.name().equals("public")) return;
        String legacy = """
                SELECT to_regclass(?) IS NULL
                   AND to_regclass('public.flyway_schema_history') IS NOT NULL
                   AND to_regclass('public.jobs') IS NOT NULL
                   AND EXISTS (SELECT 1 FROM information_schema.columns
                               WHERE table_schema = 'public' AND table_name = 'jobs' AND column_name = 'vtime')""";
        try (Connection c = dataSource.getConnection(); PreparedStatement st = c.prepareStatement(legacy)) {
            st.setString(1, schema.name() + ".flyway_schema_history");
            boolean candidate;
            try (ResultSet rs = st.executeQuery()) {
                rs.next();
                candidate = rs.getBoolean(1);
            }
            if (candidate && legacyHistory(c)) {
                throw new JobQueueException("jobq 0.1's tables are in schema public (public.jobs, with jobq's history in "
                        + "public.flyway_schema_history) and schema " + schema.name() + " has no jobq yet: migrating would "
                        + "start an empty queue beside them. Set JOBQ_SCHEMA=public (--schema public) to keep using them "
                        + "where they are; see docs/operations.md, \"Upgrading from 0.1\"");
            }
        } catch (SQLException e) {
            throw failure("cannot inspect the database before migrating", e);
        }
    }

    /**
     * A database that cannot be reached (or lost the session: a restart, too many connections) is a
     * {@link StoreUnavailableException}, which a launcher may wait out; anything else a {@link JobQueueException}.
     */
    private static JobQueueException failure(String what, Exception e) {
        if (StoreErrors.isUnavailable(e)) return new StoreUnavailableException(what, e);
        return new JobQueueException(what + ": " + e.getMessage(), e);
    }

    private static boolean legacyHistory(Connection c) throws SQLException {
        try (PreparedStatement st = c.prepareStatement("""
                SELECT EXISTS (SELECT 1 FROM public.flyway_schema_history
                               WHERE version = '1' AND description = 'jobs and tenants' AND success)""");
             ResultSet rs = st.executeQuery()) {
            rs.next();
            return rs.getBoolean(1);
        }
    }
}
