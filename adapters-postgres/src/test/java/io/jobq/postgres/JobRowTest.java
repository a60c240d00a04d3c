package io.jobq.postgres;

import static io.jobq.postgres.schema.Tables.JOBS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.jobq.application.port.NewJob;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.tenant.TenantId;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Objects;
import org.jooq.Field;
import org.jooq.Record;
import org.jooq.Result;
import org.junit.jupiter.api.Test;
import org.postgresql.PGStatement;

/**
 * {@link JobRow} reads every column of {@code jobs} as jOOQ's generated table reads it: the same rows read both
 * ways, column by column and as jobs, over rows with every nullable column null, every one set, and the values
 * people write by hand (infinite timestamps, odd text), through pgjdbc's text and binary transfers.
 */
class JobRowTest extends PostgresStoreTestCase {

    @Test
    void everyColumnReadsAsJooqReadsIt() throws Exception {
        for (int i = 0; i < 3; i++) store.enqueue(NewJob.of(TenantId.of("t" + i), QueueName.DEFAULT, TaskName.of("noop"), "{\"n\": " + i + "}"));
        // Row 1 as enqueued (nulls). Row 2 with every nullable column set; row 3 with values written by hand.
        db.execute("""
                UPDATE jobq.jobs SET state = 'running', locked_by = 'w-1', locked_until = now() + interval '30 s',
                    last_error = 'boom ✓ ' || repeat('x', 3000), idempotency_key = 'k-1', started_at = now(),
                    finished_at = now(), result = '{"big": 123456789012345678901234567890, "s": "é"}'::jsonb,
                    vtime = NULL, capped = true, cost = 12.5, cancel_requested = true, priority = 7
                WHERE id = (SELECT min(id) + 1 FROM jobq.jobs)""");
        db.execute("""
                UPDATE jobq.jobs SET run_at = 'infinity', created_at = '-infinity', started_at = 'infinity',
                    vtime = 9.87654321e299, cost = 0, payload = '[1, "two", null, {"a": []}]'
                WHERE id = (SELECT max(id) FROM jobq.jobs)""");

        Result<Record> jooqs = db.dsl().select(JOBS.fields()).from(JOBS).orderBy(JOBS.ID).fetch();
        try (Connection c = db.newConnection();
                PreparedStatement ps = c.prepareStatement("SELECT * FROM jobq.jobs ORDER BY id")) {
            // enough executions that pgjdbc prepares the statement on the server and reads values in binary
            for (int round = 0; round < 7; round++) {
                List<JobRow> ours;
                try (ResultSet rs = ps.executeQuery()) {
                    ours = JobRow.readAll(rs);
                }
                assertThat(ours).hasSize(3);
                if (round == 6) assertThat(ps.unwrap(PGStatement.class).isUseServerPrepare()).as("read in binary by now").isTrue();
                for (int r = 0; r < 3; r++) {
                    for (Field<?> f : JOBS.fields()) {
                        assertThat(same(ours.get(r).get(f), jooqs.get(r).get(f))).as("round %d row %d column %s: %s vs jOOQ's %s",
                                round, r, f.getName(), ours.get(r).get(f), jooqs.get(r).get(f)).isTrue();
                    }
                    assertThat(JobRows.toJobLenient(ours.get(r))).isEqualTo(JobRows.toJobLenient(jooqs.get(r)));
                }
            }
        }
    }

    /** Equal values; timestamps as instants (jOOQ's records keep the offset the binding read them at, UTC too). */
    private static boolean same(Object ours, Object jooqs) {
        if (ours instanceof OffsetDateTime a && jooqs instanceof OffsetDateTime b) return a.toInstant().equals(b.toInstant());
        return Objects.equals(ours, jooqs) && (ours == null || ours.getClass() == jooqs.getClass());
    }

    @Test
    void aColumnThatIsNotTheTablesIsRefused() throws Exception {
        store.enqueue(NewJob.of(TenantId.DEFAULT, QueueName.DEFAULT, TaskName.of("noop"), "{}"));
        try (Connection c = db.newConnection();
                PreparedStatement ps = c.prepareStatement("SELECT * FROM jobq.jobs")) {
            List<JobRow> rows;
            try (ResultSet rs = ps.executeQuery()) {
                rows = JobRow.readAll(rs);
            }
            assertThatThrownBy(() -> rows.getFirst().get(org.jooq.impl.DSL.field("id", Long.class)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not a column of the jobs table");
        }
    }

    @Test
    void aColumnANewerSchemaAddedIsPassedOverAndColumnsAreFoundByName() throws Exception {
        store.enqueue(NewJob.of(TenantId.DEFAULT, QueueName.DEFAULT, TaskName.of("noop"), "{\"a\": 1}"));
        Record jooqs = db.dsl().selectFrom(JOBS).fetchSingle();
        // As a worker of the previous build reads a table a migration has since added a column to.
        for (String sql : List.of("SELECT *, 'new' AS added_later FROM jobq.jobs", "SELECT 'new' AS added_first, * FROM jobq.jobs")) {
            try (Connection c = db.newConnection();
                    PreparedStatement ps = c.prepareStatement(sql);
                    ResultSet rs = ps.executeQuery()) {
                assertThat(JobRows.toJob(JobRow.readAll(rs).getFirst())).as(sql).isEqualTo(JobRows.toJob(jooqs));
            }
        }
    }

    @Test
    void aMissingColumnIsNamed() throws Exception {
        try (Connection c = db.newConnection();
                PreparedStatement ps = c.prepareStatement("SELECT id, attempts FROM jobq.jobs");
                ResultSet rs = ps.executeQuery()) {
            assertThatThrownBy(() -> JobRow.readAll(rs)).isInstanceOf(SQLException.class).hasMessageContaining("queue");
        }
    }
}
