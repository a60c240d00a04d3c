package io.jobq.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.postgres.schema.DefaultSchema;
import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.jooq.Field;
import org.jooq.Table;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The jOOQ classes are generated at build time from the Flyway scripts through H2 (DDLDatabase); this
 * checks that what the scripts build on real PostgreSQL matches them, column by column, and that the
 * constraints and partial indexes the design relies on are really there.
 */
@ExtendWith(PostgresDatabaseExtension.class)
class SchemaTest {

    @Test
    void everyGeneratedTableAndColumnExistsInTheMigratedDatabase(TestDatabase db) {
        List<Table<?>> tables = DefaultSchema.DEFAULT_SCHEMA.getTables();
        assertThat(tables).extracting(Table::getName).contains("jobs", "tenants");
        for (Table<?> table : tables) {
            Map<String, String> live = db.dsl().resultQuery(
                            "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = 'jobq' AND table_name = ?",
                            table.getName())
                    .fetchMap(r -> r.get(0, String.class), r -> r.get(1, String.class));
            assertThat(live).as("columns of %s", table.getName()).isNotEmpty();
            for (Field<?> field : table.fields()) {
                assertThat(live).as("table %s", table.getName()).containsKey(field.getName());
            }
            assertThat(live.keySet()).as("no live column is missing from the generated %s", table.getName())
                    .containsExactlyInAnyOrderElementsOf(
                            java.util.Arrays.stream(table.fields()).map(Field::getName).toList());
        }
    }

    /**
     * Plain SQL names jobq's tables with the prefix {@code jobq.}, which {@link JobqSchema#sql} rewrites for
     * another schema only for the names it knows: a table a migration adds and that list misses would be
     * read from the wrong schema in every install outside {@code jobq}. So every table the migrations make
     * must be rewritten.
     */
    @Test
    void everyMigratedTableIsRewrittenForAnotherSchema(TestDatabase db) {
        List<String> tables = db.dsl().resultQuery("""
                        SELECT c.relname::text FROM pg_class c
                        WHERE c.relnamespace = 'jobq'::regnamespace AND c.relkind IN ('r', 'p') AND c.relname <> 'flyway_schema_history'
                        ORDER BY 1""").fetch(0, String.class);
        assertThat(tables).contains("jobs", "upkeep_turn");
        for (String t : tables) {
            assertThat(JobqSchema.of("billing").sql("SELECT 1 FROM jobq." + t)).as("table %s", t).isEqualTo("SELECT 1 FROM billing." + t);
        }
    }

    @Test
    void timeColumnsAreTimestamptzAndDocumentsAreJsonb(TestDatabase db) {
        Map<String, String> types = db.dsl().resultQuery(
                        "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'jobs'")
                .fetchMap(r -> r.get(0, String.class), r -> r.get(1, String.class));
        for (String c : List.of("run_at", "locked_until", "created_at", "started_at", "finished_at")) {
            assertThat(types.get(c)).as(c).isEqualTo("timestamp with time zone");
        }
        assertThat(types.get("payload")).isEqualTo("jsonb");
        assertThat(types.get("result")).isEqualTo("jsonb");
    }

    @Test
    void constraintsAndPartialIndexesExist(TestDatabase db) {
        List<String> constraints = db.dsl().resultQuery(
                "SELECT conname FROM pg_constraint WHERE conrelid IN ('jobs'::regclass, 'tenants'::regclass)")
                .fetch(r -> r.get(0, String.class));
        assertThat(constraints).contains("jobs_state_known", "jobs_attempts_nonnegative", "jobs_max_attempts_positive",
                "jobs_lease_iff_running", "jobs_queued_has_vtime", "jobs_tenant_fkey", "tenants_weight_range",
                "jobs_task_valid", "jobs_tenant_valid", "jobs_queue_valid", "jobs_vtime_finite", "tenants_queue_valid",
                "tenants_tenant_valid");
        Map<String, String> indexes = db.dsl().resultQuery("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'jobs'")
                .fetchMap(r -> r.get(0, String.class), r -> r.get(1, String.class));
        assertThat(indexes.get("jobs_runnable")).contains("(queue, vtime, id)").contains("WHERE").contains("'queued'");
        assertThat(indexes.get("jobs_due_by_queue")).contains("(queue, run_at)").contains("'scheduled'");
        assertThat(indexes.get("jobs_leases")).contains("(locked_until)").contains("'running'");
        assertThat(indexes.get("jobs_idempotency")).startsWith("CREATE UNIQUE INDEX").contains("(tenant, idempotency_key)");
    }

    @Test
    void checkConstraintsRejectDishonestRows(TestDatabase db) {
        db.execute("INSERT INTO tenants (queue, tenant) VALUES ('q', 't')");
        Map<String, String> bad = Map.of(
                "state outside the known set", "INSERT INTO jobs (queue, tenant, task, state) VALUES ('q','t','x','paused')",
                "negative attempts", "INSERT INTO jobs (queue, tenant, task, state, attempts) VALUES ('q','t','x','scheduled',-1)",
                "zero max_attempts", "INSERT INTO jobs (queue, tenant, task, state, max_attempts) VALUES ('q','t','x','scheduled',0)",
                "running without a lease", "INSERT INTO jobs (queue, tenant, task, state) VALUES ('q','t','x','running')",
                "a lease while not running", "INSERT INTO jobs (queue, tenant, task, state, locked_by, locked_until) VALUES ('q','t','x','scheduled','w',now())",
                "queued without a vtime", "INSERT INTO jobs (queue, tenant, task, state) VALUES ('q','t','x','queued')",
                "zero weight", "INSERT INTO tenants (queue, tenant, weight) VALUES ('q','t2',0)",
                "NaN weight", "INSERT INTO tenants (queue, tenant, weight) VALUES ('q','t3','NaN')",
                "unknown tenant", "INSERT INTO jobs (queue, tenant, task, state) VALUES ('q','nobody','x','scheduled')");
        Map<String, Boolean> refused = bad.entrySet().stream().collect(Collectors.toMap(Map.Entry::getKey, e -> {
            try {
                db.execute(e.getValue());
                return false;
            } catch (RuntimeException ex) {
                return true;
            }
        }));
        assertThat(refused).allSatisfy((what, wasRefused) -> assertThat(wasRefused).as(what).isTrue());
    }
}
