package io.jobq.postgres;

import io.jobq.application.port.VacuumHealth;
import io.jobq.application.port.VacuumHealth.Horizon;
import io.jobq.application.port.VacuumHealth.TableStats;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import org.jooq.DSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * jobq's own VACUUM, for tables the server's autovacuum will not clean (autovacuum or track_counts off, or
 * the table's autovacuum_enabled = false). Checked at most once per {@code interval} per store; a table is
 * vacuumed once its dead row versions reach its autovacuum threshold (the same storage parameters V3 sets,
 * so the rule has one home) and nobody vacuumed it within the last {@code interval} by the server's clock
 * (so N workers vacuum a table about once an interval between them, not N times), one worker at a time
 * across all processes (a session advisory lock), as plain
 * {@code VACUUM (SKIP_LOCKED, ANALYZE)}: never FULL (no exclusive lock, readers and writers go on), never
 * waiting behind another VACUUM, and with statistics refreshed, as autovacuum would.
 *
 * <p>The first call always checks, so a worker logs within its first maintenance pass a WARN for every
 * table autovacuum leaves alone, with what to change. VACUUM needs the table's owner (or the database's);
 * without it the store logs that once and stops trying.
 */
final class SelfVacuum {
    private static final Logger log = LoggerFactory.getLogger(SelfVacuum.class);

    /** pg_try_advisory_lock(int, int) key: "jobq" in ASCII, then 1 for vacuum. Apart from Flyway's bigint key. */
    static final int LOCK_NAMESPACE = 0x6A6F6271;
    static final int LOCK_VACUUM = 1;

    private static final String MAY_VACUUM = """
            SELECT bool_and(pg_has_role(c.relowner, 'USAGE') OR pg_has_role(d.datdba, 'USAGE')
                   OR CASE WHEN current_setting('server_version_num')::int >= 170000
                           THEN has_table_privilege(c.oid, 'MAINTAIN') ELSE false END)
            FROM pg_class c, pg_database d
            WHERE c.relnamespace = 'jobq'::regnamespace AND c.relname IN ('jobs', 'tenants') AND d.datname = current_database()""";

    /**
     * Whether anyone vacuumed the table within the last {@code ?} ms, by the server's clock; a time in the
     * future (a clock set back) does not count, so it cannot stop vacuuming until the clock catches up.
     */
    private static final String VACUUMED_LATELY = """
            SELECT coalesce(greatest(last_vacuum, last_autovacuum)
                            BETWEEN now() - ? * interval '1 millisecond' AND now(), false)
            FROM pg_stat_user_tables WHERE schemaname = ? AND relname = ?""";

    private final Optional<Duration> interval;
    private final Set<String> warned = ConcurrentHashMap.newKeySet();
    private long lastCheckNanos;
    private boolean checked;
    private volatile boolean notPermitted;

    /** @param interval how often at most to check; empty = never vacuum, only warn once */
    SelfVacuum(Optional<Duration> interval) {
        this.interval = interval;
    }

    /** @return true if it vacuumed at least one table */
    boolean runIfDue(DSLContext dsl) {
        if (!due()) return false;
        VacuumHealth health = VacuumHealthQuery.read(dsl);
        List<TableStats> unattended = health.tables().stream().filter(t -> !t.autovacuumEnabled()).toList();
        warnOnce(unattended);
        if (interval.isEmpty() || notPermitted) return false;
        List<TableStats> due = unattended.stream().filter(TableStats::needsVacuum).toList();
        if (due.isEmpty()) return false;
        // one pooled session for lock, check and VACUUM; the report after it takes another, never two at once
        JobqSchema schema = JobqSchema.of(dsl);
        List<TableStats> vacuumed = dsl.connectionResult(c -> vacuum(c, schema, due));
        if (!vacuumed.isEmpty()) report(vacuumed, VacuumHealthQuery.read(dsl));
        return !vacuumed.isEmpty();
    }

    private synchronized boolean due() {
        long now = System.nanoTime();
        if (checked && (interval.isEmpty() || now - lastCheckNanos < interval.get().toNanos())) return false;
        checked = true;
        lastCheckNanos = now;
        return true;
    }

    /** @return the tables it vacuumed: none if another worker holds the lock or vacuumed them lately */
    private List<TableStats> vacuum(Connection c, JobqSchema schema, List<TableStats> due) throws SQLException {
        boolean autoCommit = c.getAutoCommit();
        if (!autoCommit) c.setAutoCommit(true); // VACUUM cannot run inside a transaction block
        try (Statement st = c.createStatement()) {
            if (!queryBoolean(st, "SELECT pg_try_advisory_lock(" + LOCK_NAMESPACE + ", " + LOCK_VACUUM + ")")) {
                return List.of(); // another worker is vacuuming right now
            }
            try {
                if (!queryBoolean(st, schema.sql(MAY_VACUUM))) {
                    notPermitted = true;
                    log.warn("jobq cannot VACUUM its tables: its database role owns neither them nor the database; it will"
                            + " not try again until restarted. Have their owner run VACUUM, or turn autovacuum on (see README, Operations)");
                    return List.of();
                }
                List<TableStats> stillDue = new ArrayList<>();
                for (TableStats t : due) {
                    if (!vacuumedLately(c, schema, t.table(), interval.orElseThrow())) stillDue.add(t);
                }
                if (!stillDue.isEmpty()) vacuumWithoutTimeout(c, st, schema, stillDue); // else another worker just did
                return stillDue;
            } finally {
                queryBoolean(st, "SELECT pg_advisory_unlock(" + LOCK_NAMESPACE + ", " + LOCK_VACUUM + ")");
            }
        } finally {
            if (!autoCommit) c.setAutoCommit(false);
        }
    }

    private static boolean vacuumedLately(Connection c, JobqSchema schema, String table, Duration within) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(VACUUMED_LATELY)) {
            ps.setLong(1, within.toMillis());
            ps.setString(2, schema.name());
            ps.setString(3, table);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() && rs.getBoolean(1);
            }
        }
    }

    /**
     * A statement_timeout on jobq's role (a sound guard for its short statements) would cancel a long VACUUM
     * and waste its work, so the session runs VACUUM without one and gets its own value back afterwards.
     */
    private static void vacuumWithoutTimeout(Connection c, Statement st, JobqSchema schema, List<TableStats> due) throws SQLException {
        String timeout;
        try (ResultSet rs = st.executeQuery("SELECT current_setting('statement_timeout')")) {
            rs.next();
            timeout = rs.getString(1);
        }
        st.execute("SET statement_timeout = 0");
        try {
            for (TableStats table : due) vacuumOne(st, schema, table);
        } finally {
            try (PreparedStatement restore = c.prepareStatement("SELECT set_config('statement_timeout', ?, false)")) {
                restore.setString(1, timeout);
                restore.execute();
            }
        }
    }

    private static void vacuumOne(Statement st, JobqSchema schema, TableStats table) throws SQLException {
        long start = System.nanoTime();
        // both names are plain identifiers: a validated JobqSchema and one of VacuumHealthQuery.TABLES, never input
        st.execute("VACUUM (SKIP_LOCKED, ANALYZE) " + schema.name() + "." + table.table());
        for (SQLWarning w = st.getWarnings(); w != null; w = w.getNextWarning()) {
            log.info("VACUUM {}: {}", table.table(), w.getMessage()); // e.g. skipped: another VACUUM holds the table
        }
        st.clearWarnings();
        log.info("vacuumed {} in {} ms ({} dead row versions, threshold {})", table.table(),
                (System.nanoTime() - start) / 1_000_000, table.deadTuples(), table.vacuumThreshold());
    }

    /** A holder open this long, or one with no start time (slot, standby), is worth a WARN: 1 min. */
    static final Duration LONG_HELD = Duration.ofMinutes(1);

    /**
     * Says when VACUUM removed less than half of what it found: versions a snapshot may still see cannot be
     * removed. WARN when the oldest holder is long-held (that, not VACUUM, is what the operator must fix);
     * INFO when it is young, as under steady traffic, where the next VACUUM will take them.
     */
    private static void report(List<TableStats> before, VacuumHealth after) {
        for (TableStats b : before) {
            TableStats a = after.table(b.table()).orElse(b);
            if (!a.needsVacuum() || a.deadTuples() * 2 < b.deadTuples()) continue;
            Horizon oldest = after.oldest();
            boolean longHeld = oldest.age().map(age -> age.compareTo(LONG_HELD) >= 0).orElse(oldest.xidAge() > 0);
            String holder = oldest.source().label() + ", " + oldest.xidAge() + " xids, open "
                    + oldest.age().map(d -> d.toSeconds() + " s").orElse("for an unknown time");
            if (longHeld) {
                log.warn("VACUUM left {} of {} dead row versions in {}: an open snapshot still needs them (oldest: {})."
                        + " Claims slow down until it ends; see jobq_xmin_horizon_age_seconds and README, Operations",
                        a.deadTuples(), b.deadTuples(), b.table(), holder);
            } else {
                log.info("VACUUM left {} of {} dead row versions in {}; transactions running meanwhile still saw them"
                        + " (oldest: {})", a.deadTuples(), b.deadTuples(), b.table(), holder);
            }
        }
    }

    /** One WARN naming every table not warned about before (per store: once per process in practice). */
    private void warnOnce(List<TableStats> unattended) {
        List<TableStats> fresh = unattended.stream().filter(t -> warned.add(t.table())).toList();
        if (fresh.isEmpty()) return;
        log.warn("autovacuum is off for {} (the server's autovacuum or track_counts setting is off, or the table's"
                + " autovacuum_enabled = false): every enqueue, claim and completion leaves dead row versions that"
                + " nothing removes, and claims slow down as they pile up. {} Set autovacuum = on (and track_counts = on)"
                + " on the server; see README, Operations",
                fresh.stream().map(t -> "table " + t.table()).collect(Collectors.joining(", ")), interval.isPresent()
                        ? "Meanwhile jobq vacuums each itself once its dead row versions pass its autovacuum threshold ("
                                + fresh.stream().map(t -> t.table() + ": " + t.vacuumThreshold()).collect(Collectors.joining(", ")) + ")."
                        : "jobq's own vacuum is disabled, so nothing cleans it.");
    }

    private static boolean queryBoolean(Statement st, String sql) throws SQLException {
        try (ResultSet rs = st.executeQuery(sql)) {
            return rs.next() && rs.getBoolean(1);
        }
    }
}
