package io.jobq.postgres;

import io.jobq.application.port.JobQueueException;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.MigrationInfo;
import org.flywaydb.core.api.MigrationState;

/**
 * Applies and checks jobq's schema: the Flyway scripts in {@code db/migration} on the classpath, the
 * same files jOOQ's classes are generated from.
 */
public final class Migrations {
    private Migrations() {}

    /**
     * Brings the schema up to date. Safe to run from several processes at once (Flyway takes an
     * advisory lock).
     *
     * @return how many migrations were applied (0 when already current)
     * @throws JobQueueException if a migration fails
     */
    public static int migrate(DataSource dataSource) {
        try {
            return flyway(dataSource).migrate().migrationsExecuted;
        } catch (RuntimeException e) {
            throw new JobQueueException("schema migration failed: " + e.getMessage(), e);
        }
    }

    /**
     * Throws unless every migration this build knows is applied, for roles that must not change the
     * schema (workers).
     *
     * @throws JobQueueException naming the pending migrations and how to apply them
     */
    public static void requireCurrent(DataSource dataSource) {
        MigrationInfo[] pending;
        try {
            pending = flyway(dataSource).info().pending();
        } catch (RuntimeException e) {
            throw new JobQueueException("cannot read the schema version: " + e.getMessage(), e);
        }
        if (pending.length > 0) {
            StringBuilder names = new StringBuilder();
            for (MigrationInfo m : pending) {
                if (m.getState() == MigrationState.PENDING) names.append(names.isEmpty() ? "" : ", ").append(m.getVersion());
            }
            throw new JobQueueException("the database schema is not migrated (pending: " + names
                    + "); run `jobq migrate` (or start the api role, which migrates) first");
        }
    }

    private static Flyway flyway(DataSource dataSource) {
        return Flyway.configure()
                .dataSource(dataSource)
                .locations("classpath:db/migration")
                .failOnMissingLocations(true)
                .load();
    }
}
