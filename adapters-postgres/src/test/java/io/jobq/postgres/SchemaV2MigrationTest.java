package io.jobq.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import java.util.List;
import java.util.Map;
import org.flywaydb.core.Flyway;
import org.jooq.Record;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Upgrading a database whose rows break schema V2's rules: the migration must not fail on them, must
 * quarantine exactly those rows (each with a reason), leave every other row as it was, and end with
 * every rule validated. The schema is built at version 1 in a schema of its own, filled by hand, then
 * migrated to the latest version, as {@code jobq migrate} would.
 */
@ExtendWith(PostgresDatabaseExtension.class)
class SchemaV2MigrationTest {
    static final String SCHEMA = "legacy";

    TestDatabase db;

    @BeforeEach
    void setUp(TestDatabase db) {
        this.db = db;
        db.execute("DROP SCHEMA IF EXISTS " + SCHEMA + " CASCADE");
    }

    @AfterEach
    void tearDown() {
        db.execute("DROP SCHEMA IF EXISTS " + SCHEMA + " CASCADE");
    }

    Flyway flyway(String target) {
        // its own connections (not the pool's): Flyway sets the search_path of the session it migrates on
        return Flyway.configure().dataSource(db.jdbcUrl(), null, null).schemas(SCHEMA)
                .locations(Migrations.LOCATION).target(target).load();
    }

    long insert(String queue, String tenant, String task, String state, String vtime, String payloadSql) {
        db.execute("INSERT INTO legacy.tenants (queue, tenant) VALUES (?, ?) ON CONFLICT DO NOTHING", queue, tenant);
        return db.dsl().resultQuery("INSERT INTO legacy.jobs (queue, tenant, task, state, vtime, payload, finished_at,"
                        + " last_error) VALUES (?, ?, ?, ?, ?::float8, " + payloadSql + ", CASE WHEN ? IN ('done', 'dead') THEN now() END,"
                        + " 'earlier failure') RETURNING id", queue, tenant, task, state, vtime, state)
                .fetchSingle(0, Long.class);
    }

    Record job(long id) {
        return db.dsl().resultQuery("SELECT state, vtime, last_error, task, pg_column_size(payload) > 0 AS stored FROM legacy.jobs"
                + " WHERE id = ?", id).fetchOne();
    }

    @Test
    void rowsThatBreakTheRulesAreQuarantinedAndEveryOtherRowIsKept() {
        flyway("1").migrate();
        long good = insert("default", "acme", "noop", "queued", "1", "'{\"n\": 1}'");
        long doneGood = insert("default", "acme", "noop", "done", "2", "'[1,2]'");
        long badTask = insert("default", "acme", "bad task", "queued", "-1", "'{}'");
        long badTenant = insert("default", "a b", "noop", "scheduled", null, "'{}'");
        long infinite = insert("default", "acme", "noop", "queued", "Infinity", "'{}'");
        long nanDone = insert("default", "acme", "noop", "done", "NaN", "'{}'");
        long bomb = insert("default", "acme", "noop", "queued", "3", SchemaRulesTest.UNPRINTABLE_PAYLOAD);
        long doneBomb = insert("default", "acme", "noop", "done", "4", SchemaRulesTest.UNPRINTABLE_PAYLOAD);

        assertThat(flyway("latest").migrate().success).isTrue();

        // invalid names: moved out whole, with the reason
        Map<Long, String> quarantined = db.dsl().resultQuery("SELECT (row_data->>'id')::bigint, reason FROM legacy.quarantined_rows"
                + " WHERE table_name = 'jobs'").fetchMap(r -> r.get(0, Long.class), r -> r.get(1, String.class));
        assertThat(quarantined).containsOnlyKeys(badTask, badTenant);
        assertThat(quarantined.get(badTask)).isEqualTo("schema migration V2: task 'bad task' is not a valid name"
                + " (names are 1-128 characters of [A-Za-z0-9_.:-])");
        assertThat(quarantined.get(badTenant)).startsWith("schema migration V2: tenant 'a b' is not a valid name");
        assertThat(db.dsl().resultQuery("SELECT reason FROM legacy.quarantined_rows WHERE table_name = 'tenants'")
                .fetch(0, String.class)).containsExactly("schema migration V2: tenant 'a b' is not a valid name"
                        + " (names are 1-128 characters of [A-Za-z0-9_.:-])");
        assertThat(job(badTask)).isNull();
        assertThat(job(badTenant)).isNull();

        // a queued job without a usable tag is dead; elsewhere the tag is dropped and nothing else changes
        assertThat(job(infinite).get("state", String.class)).isEqualTo("dead");
        assertThat(job(infinite).get("vtime")).isNull();
        assertThat(job(infinite).get("last_error", String.class)).isEqualTo("quarantined by schema migration V2: vtime"
                + " Infinity is not a finite number >= 0; POST /jobs/" + infinite + "/retry queues the job again with a fresh tag");
        assertThat(job(nanDone).get("state", String.class)).isEqualTo("done");
        assertThat(job(nanDone).get("vtime")).isNull();
        assertThat(job(nanDone).get("last_error", String.class)).isEqualTo("earlier failure");

        // a job still to run whose payload cannot be printed is dead; a finished one is left for reads to cope
        assertThat(job(bomb).get("state", String.class)).isEqualTo("dead");
        assertThat(job(bomb).get("last_error", String.class)).startsWith("quarantined by schema migration V2: payload"
                + " holds a number that PostgreSQL would print with more than 1000 digits");
        assertThat(db.dsl().resultQuery("SELECT state, last_error FROM legacy.jobs WHERE id = ?", doneBomb).fetchOne().intoList())
                .containsExactly("done", "earlier failure");

        // the good rows, untouched
        assertThat(job(good).intoList()).containsExactly("queued", 1.0, "earlier failure", "noop", true);
        assertThat(job(doneGood).intoList()).containsExactly("done", 2.0, "earlier failure", "noop", true);

        // every rule is in force and validated, and the payload rule applies to writes on any search_path
        List<String> unvalidated = db.dsl().resultQuery("SELECT conname FROM pg_constraint WHERE connamespace = 'legacy'::regnamespace"
                + " AND NOT convalidated").fetch(0, String.class);
        assertThat(unvalidated).isEmpty();
        assertThat(db.dsl().resultQuery("SELECT conname FROM pg_constraint WHERE connamespace = 'legacy'::regnamespace")
                .fetch(0, String.class)).contains("jobs_task_valid", "jobs_tenant_valid", "jobs_queue_valid", "jobs_vtime_finite",
                        "tenants_queue_valid", "tenants_tenant_valid");
        Throwable refused = catchThrowable(() -> insert("default", "acme", "noop", "queued", "5", SchemaRulesTest.UNPRINTABLE_PAYLOAD));
        assertThat(refused).hasMessageContaining("payload holds a number that PostgreSQL would print with more than 1000 digits");
    }
}
