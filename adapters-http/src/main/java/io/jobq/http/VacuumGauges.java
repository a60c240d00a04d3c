package io.jobq.http;

import io.jobq.application.port.JobStore;
import io.jobq.application.port.VacuumHealth;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.ToDoubleFunction;

/**
 * The gauges that show table bloat coming, from {@link JobStore#vacuumHealth()}. Prometheus names:
 * <ul>
 *   <li>{@code jobq_xmin_horizon_age_seconds{source}}: how long the oldest transaction holding back cleanup of
 *       jobq's tables has been open, for the sources with a start time ({@code session},
 *       {@code prepared_transaction}); 0 when none holds anything back;
 *   <li>{@code jobq_xmin_horizon_age_xids{source}}: transaction ids assigned since the oldest holder began, for
 *       every source ({@code session}, {@code prepared_transaction}, {@code replication_slot}, {@code standby});
 *   <li>{@code jobq_table_dead_tuples{table}}, {@code jobq_table_live_tuples{table}}: row versions of
 *       {@code jobs} and {@code tenants} not yet cleaned up, and live rows;
 *   <li>{@code jobq_table_vacuum_threshold_tuples{table}}: dead row versions at which (auto)vacuum cleans the table;
 *   <li>{@code jobq_table_last_vacuum_timestamp_seconds{table}}: Unix time of the last VACUUM by anyone, 0 if never;
 *   <li>{@code jobq_table_autovacuum_enabled{table}}: 1 if the server's autovacuum cleans the table, else 0.
 * </ul>
 * A store with no such cleanup (empty health) shows none of them.
 */
final class VacuumGauges {
    private final MultiGauge horizonSeconds;
    private final MultiGauge horizonXids;
    private final List<TableGauge> tableGauges;

    /** One per-table gauge and what it reads. */
    private record TableGauge(MultiGauge gauge, ToDoubleFunction<VacuumHealth.TableStats> value) {}

    VacuumGauges(MeterRegistry registry) {
        horizonSeconds = MultiGauge.builder("jobq.xmin.horizon.age")
                .description("How long the oldest transaction holding back cleanup of jobq's tables has been open")
                .baseUnit("seconds").register(registry);
        horizonXids = MultiGauge.builder("jobq.xmin.horizon.age.xids")
                .description("Transaction ids assigned since the oldest holder of the cleanup horizon began")
                .register(registry);
        tableGauges = List.of(
                table(registry, "jobq.table.dead.tuples", "Dead row versions not yet cleaned up", t -> t.deadTuples()),
                table(registry, "jobq.table.live.tuples", "Live rows, estimated", t -> t.liveTuples()),
                table(registry, "jobq.table.vacuum.threshold.tuples", "Dead row versions at which (auto)vacuum cleans the table",
                        t -> t.vacuumThreshold()),
                table(registry, "jobq.table.last.vacuum.timestamp.seconds", "Unix time of the table's last VACUUM, 0 if never",
                        t -> t.lastVacuum().map(i -> i.toEpochMilli() / 1000.0).orElse(0.0)),
                table(registry, "jobq.table.autovacuum.enabled", "1 if the server's autovacuum cleans the table, else 0",
                        t -> t.autovacuumEnabled() ? 1 : 0));
    }

    private static TableGauge table(MeterRegistry registry, String name, String description,
            ToDoubleFunction<VacuumHealth.TableStats> value) {
        return new TableGauge(MultiGauge.builder(name).description(description).register(registry), value);
    }

    /** Replaces every gauge's rows with {@code health}'s; empty clears them. */
    void show(Optional<VacuumHealth> health) {
        List<MultiGauge.Row<?>> seconds = new ArrayList<>();
        List<MultiGauge.Row<?>> xids = new ArrayList<>();
        health.ifPresent(h -> h.horizons().forEach(horizon -> {
            Tags tags = Tags.of("source", horizon.source().label());
            xids.add(MultiGauge.Row.of(tags, horizon.xidAge()));
            horizon.age().ifPresent(age -> seconds.add(MultiGauge.Row.of(tags, age.toMillis() / 1000.0)));
        }));
        horizonSeconds.register(seconds, true);
        horizonXids.register(xids, true);
        for (TableGauge g : tableGauges) {
            List<MultiGauge.Row<?>> rows = new ArrayList<>();
            health.ifPresent(h -> h.tables().forEach(t -> rows.add(MultiGauge.Row.of(Tags.of("table", t.table()),
                    g.value().applyAsDouble(t)))));
            g.gauge().register(rows, true);
        }
    }
}
