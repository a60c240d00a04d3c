package io.jobq.postgres;

import io.jobq.application.port.VacuumHealth;
import io.jobq.application.port.VacuumHealth.Horizon;
import io.jobq.application.port.VacuumHealth.HorizonSource;
import io.jobq.application.port.VacuumHealth.TableStats;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.jooq.DSLContext;
import org.jooq.Record;
import org.jooq.Result;

/**
 * Reads {@link VacuumHealth} in one statement, from views every role may read: no superuser needed. Without
 * pg_read_all_stats (or pg_monitor) a role sees other roles' sessions' snapshot xmin but not their start
 * time, so the session age in seconds then covers only sessions of its own role; the xid age covers all.
 */
final class VacuumHealthQuery {
    private VacuumHealthQuery() {}

    /** jobq's tables, in the order {@link VacuumHealth#tables()} lists them; both churn with every job. */
    static final List<String> TABLES = List.of("jobs", "tenants");

    /**
     * What pins the horizon of a table in this database (PostgreSQL's ComputeXidHorizons): sessions of this
     * database holding a snapshot xmin or an xid (the older of the two counts), prepared transactions of
     * this database, the xmin of replication slots (any database; a logical slot's catalog_xmin holds back
     * only system catalogs, so it is left out), and standbys' hot_standby_feedback. Left out: our own session,
     * and autovacuum workers and walsenders, which VACUUM ignores or which the standby row already counts.
     * age() counts xids from the next one to be assigned, without assigning one. Each sub-select is one
     * aggregate row, cross-joined onto each table's row.
     */
    private static final String SQL = """
            WITH sessions AS (
                SELECT coalesce(max(greatest(age(backend_xid), age(backend_xmin))), 0) AS xids,
                       extract(epoch FROM now() - min(xact_start))::float8 AS seconds
                FROM pg_stat_activity
                WHERE datname = current_database() AND pid <> pg_backend_pid()
                  AND backend_type IS DISTINCT FROM 'autovacuum worker'
                  AND pid NOT IN (SELECT pid FROM pg_stat_replication)
                  AND (backend_xid IS NOT NULL OR backend_xmin IS NOT NULL)
            ), prepared AS (
                SELECT coalesce(max(age(transaction)), 0) AS xids,
                       extract(epoch FROM now() - min(prepared))::float8 AS seconds
                FROM pg_prepared_xacts WHERE database = current_database()
            ), slots AS (
                SELECT coalesce(max(age(xmin)), 0) AS xids FROM pg_replication_slots WHERE xmin IS NOT NULL
            ), standbys AS (
                SELECT coalesce(max(age(backend_xmin)), 0) AS xids FROM pg_stat_replication WHERE backend_xmin IS NOT NULL
            ), server AS (
                SELECT current_setting('autovacuum')::bool AND current_setting('track_counts')::bool AS autovacuum,
                       current_setting('autovacuum_vacuum_threshold')::float8 AS threshold,
                       current_setting('autovacuum_vacuum_scale_factor')::float8 AS scale_factor
            )
            SELECT c.relname::text, s.n_dead_tup, s.n_live_tup,
                   (coalesce(o.threshold, v.threshold) + coalesce(o.scale_factor, v.scale_factor) * greatest(c.reltuples, 0))::bigint,
                   greatest(s.last_vacuum, s.last_autovacuum),
                   v.autovacuum AND coalesce(o.enabled, true),
                   se.xids, se.seconds, pr.xids, pr.seconds, sl.xids, sb.xids
            FROM pg_class c
            JOIN pg_stat_user_tables s ON s.relid = c.oid
            CROSS JOIN LATERAL (
                SELECT max(option_value) FILTER (WHERE option_name = 'autovacuum_enabled')::bool AS enabled,
                       max(option_value) FILTER (WHERE option_name = 'autovacuum_vacuum_threshold')::float8 AS threshold,
                       max(option_value) FILTER (WHERE option_name = 'autovacuum_vacuum_scale_factor')::float8 AS scale_factor
                FROM pg_options_to_table(c.reloptions)
            ) o
            CROSS JOIN server v CROSS JOIN sessions se CROSS JOIN prepared pr CROSS JOIN slots sl CROSS JOIN standbys sb
            -- by catalog name, not 'jobq.jobs'::regclass, which needs USAGE on the schema: reading statistics does not
            WHERE c.relnamespace = 'jobq'::regnamespace AND c.relname IN ('jobs', 'tenants')""";

    static VacuumHealth read(DSLContext dsl) {
        Result<Record> rows = dsl.resultQuery(JobqSchema.of(dsl).sql(SQL)).fetch();
        if (rows.isEmpty()) throw new IllegalStateException("no statistics for tables " + TABLES);
        List<TableStats> tables = new ArrayList<>();
        for (String name : TABLES) {
            for (Record r : rows) {
                if (!name.equals(r.get(0, String.class))) continue;
                tables.add(new TableStats(name, r.get(1, Long.class), r.get(2, Long.class), r.get(3, Long.class),
                        Optional.ofNullable(r.get(4, OffsetDateTime.class)).map(OffsetDateTime::toInstant),
                        r.get(5, Boolean.class)));
            }
        }
        Record h = rows.getFirst();
        List<Horizon> horizons = List.of(
                new Horizon(HorizonSource.SESSION, h.get(6, Long.class), Optional.of(seconds(h.get(7, Double.class)))),
                new Horizon(HorizonSource.PREPARED_TRANSACTION, h.get(8, Long.class), Optional.of(seconds(h.get(9, Double.class)))),
                new Horizon(HorizonSource.REPLICATION_SLOT, h.get(10, Long.class), Optional.empty()),
                new Horizon(HorizonSource.STANDBY, h.get(11, Long.class), Optional.empty()));
        return new VacuumHealth(horizons, tables);
    }

    /** Seconds as the database measured them; none open (null) or clock noise (negative) is zero. */
    private static Duration seconds(Double s) {
        return s == null || s <= 0 ? Duration.ZERO : Duration.ofNanos((long) (s * 1e9));
    }
}
