package io.jobq.application.port;

import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Whether the store's cleanup of dead row versions (PostgreSQL's VACUUM) keeps up with jobq's tables, and what
 * holds it back. Every claim and every completion leaves a dead row version behind; cleanup may remove one
 * only once no open snapshot can still see it. So one transaction left open anywhere in the database (an
 * idle-in-transaction session, a forgotten prepared transaction, a replication slot, a standby's feedback)
 * pins every version made since it began: dead entries pile up in the runnable index and each claim walks
 * over all of them. Measured: a claim went from 0.2 ms to 24 ms after 30,000 jobs churned behind one held
 * snapshot (docs/notes-bloat.md).
 *
 * @param horizons one entry per {@link HorizonSource}, in enum order, each the oldest holder of that kind
 *     (age 0 when nothing of that kind holds anything back)
 * @param tables one entry per jobq table, jobs first
 */
public record VacuumHealth(List<Horizon> horizons, List<TableStats> tables) {

    public VacuumHealth {
        horizons = List.copyOf(horizons);
        tables = List.copyOf(tables);
        if (horizons.isEmpty()) throw new IllegalArgumentException("horizons must list every source, was empty");
    }

    /** What can hold the cleanup horizon of jobq's tables back. {@link #label()} is the metric label. */
    public enum HorizonSource {
        /** A session of the same database with an open snapshot or transaction id (e.g. idle in transaction). */
        SESSION("session"),
        /** A prepared (two-phase) transaction of the same database, not yet committed or rolled back. */
        PREPARED_TRANSACTION("prepared_transaction"),
        /** A replication slot's xmin (physical slots of standbys with hot_standby_feedback); any database. */
        REPLICATION_SLOT("replication_slot"),
        /** A standby's hot_standby_feedback through a replication connection without a slot. */
        STANDBY("standby");

        private final String label;

        HorizonSource(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    /**
     * The oldest holder of one kind.
     *
     * @param source what kind of holder
     * @param xidAge how many transaction ids have been assigned since the oldest snapshot or transaction of
     *     this kind began: every write transaction since is one more, so it also grows with traffic; 0 when
     *     none holds anything back
     * @param age how long that holder's transaction has been open (an upper bound on how long it has held
     *     the horizon); empty for kinds with no start time (slots, standbys). Sessions of other database
     *     roles count only when the store's role may read their statistics (PostgreSQL: pg_read_all_stats)
     */
    public record Horizon(HorizonSource source, long xidAge, Optional<Duration> age) {
        public Horizon {
            Objects.requireNonNull(source, "source");
            Objects.requireNonNull(age, "age");
            if (xidAge < 0) throw new IllegalArgumentException("xidAge must be >= 0, was " + xidAge);
        }
    }

    /**
     * One table's cleanup state, from the store's statistics (updated asynchronously, up to about a second
     * late; zero after a statistics reset).
     *
     * @param table the table's name (jobs, tenants)
     * @param deadTuples dead row versions not yet removed
     * @param liveTuples live rows, estimated
     * @param vacuumThreshold dead row versions at which autovacuum (or jobq itself) cleans the table:
     *     threshold + scale factor × rows, from the table's storage parameters or else the server's settings
     * @param lastVacuum when the table was last vacuumed (by anyone, autovacuum included); empty if never
     * @param autovacuumEnabled whether the server's autovacuum will clean this table: the server settings
     *     autovacuum and track_counts are on and the table's autovacuum_enabled is not false
     */
    public record TableStats(String table, long deadTuples, long liveTuples, long vacuumThreshold,
            Optional<Instant> lastVacuum, boolean autovacuumEnabled) {
        public TableStats {
            Objects.requireNonNull(table, "table");
            Objects.requireNonNull(lastVacuum, "lastVacuum");
        }

        /** Whether dead row versions have reached the point where cleanup is due. */
        public boolean needsVacuum() {
            return deadTuples >= vacuumThreshold;
        }
    }

    /** The holder that pins the oldest row versions: the largest {@link Horizon#xidAge()}. */
    public Horizon oldest() {
        return horizons.stream().max(Comparator.comparingLong(Horizon::xidAge)).orElseThrow();
    }

    /** The statistics of {@code table}, if the store reported it. */
    public Optional<TableStats> table(String table) {
        return tables.stream().filter(t -> t.table().equals(table)).findFirst();
    }
}
