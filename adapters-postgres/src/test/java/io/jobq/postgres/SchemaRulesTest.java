package io.jobq.postgres;

import static io.jobq.postgres.StoreFixtures.Q;
import static io.jobq.postgres.StoreFixtures.TASK;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.jobq.application.port.NewJob;
import io.jobq.application.port.NewJobBatch;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobState;
import io.jobq.domain.job.JsonNumbers;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.tenant.TenantId;
import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.postgresql.util.PSQLException;

/**
 * Schema V2 refuses what the code cannot handle, for writes from any client: raw SQL here, and the Java
 * doors (the store, {@link JobClient}) before the database is reached, with an IllegalArgumentException
 * naming the field. The database's numbers are pinned to the domain's constants at their boundaries.
 */
@ExtendWith(PostgresDatabaseExtension.class)
class SchemaRulesTest {
    /**
     * A payload of 8,200 x {@code 1e131071}, built in SQL: 66 kB of JSON, over 1 GB when printed ("out of
     * memory"). Sent as text it would be printed, and fail, on the way in.
     */
    static final String UNPRINTABLE_PAYLOAD =
            "(SELECT ('[' || string_agg('1e131071', ',') || ']')::jsonb FROM generate_series(1, 8200))";
    /**
     * jsonb's binary form of a JSON text takes up to 6x the text ({@code [0,0,...]}: 2 bytes of text, 12
     * stored), so the database bounds the stored form at 8x the domain's text limit.
     */
    static final long MAX_STORED_PAYLOAD_BYTES = 8L * Job.MAX_PAYLOAD_BYTES;
    /** The most all numbers of an accepted payload can print as: its text, plus the growth allowed. */
    static final long MAX_PRINTED_NUMBERS = Job.MAX_PAYLOAD_BYTES + JsonNumbers.MAX_RENDERED_GROWTH;

    TestDatabase db;

    @BeforeEach
    void setUp(TestDatabase db) {
        this.db = db;
        db.emptyTables();
        db.execute("INSERT INTO tenants (queue, tenant) VALUES ('default', 't')");
    }

    /** The SQLSTATE and constraint of the error {@code sql} fails with. */
    String refusal(String sql, Object... bindings) {
        Throwable t = catchThrowable(() -> db.execute(sql, bindings));
        assertThat(t).as("refused: %s", sql).isNotNull();
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof PSQLException p && p.getServerErrorMessage() != null) {
                return p.getSQLState() + " " + p.getServerErrorMessage().getConstraint();
            }
        }
        throw new AssertionError("no PostgreSQL error in " + t, t);
    }

    String insertJob(String column, String valueSql) {
        return "INSERT INTO jobs (queue, tenant, task, state, " + column + ") VALUES ('default', 't', 'noop', 'scheduled', "
                + valueSql + ")";
    }

    long insertedJob() {
        return db.dsl().resultQuery("INSERT INTO jobs (queue, tenant, task, state) VALUES ('default', 't', 'noop', 'scheduled')"
                + " RETURNING id").fetchSingle(0, Long.class);
    }

    @Nested
    class InvalidNames {
        @Test
        void aTaskTenantOrQueueThatIsNotAValidNameIsRefusedInJobsAndTenants() {
            assertThat(refusal("INSERT INTO jobs (queue, tenant, task, state, vtime) VALUES ('default', 't', 'bad task', 'queued', 1)"))
                    .isEqualTo("23514 jobs_task_valid");
            assertThat(refusal("INSERT INTO jobs (queue, tenant, task, state) VALUES ('default', 't', '', 'scheduled')"))
                    .isEqualTo("23514 jobs_task_valid");
            assertThat(refusal("INSERT INTO tenants (queue, tenant) VALUES ('default', 'a b')")).isEqualTo("23514 tenants_tenant_valid");
            assertThat(refusal("INSERT INTO tenants (queue, tenant) VALUES ('qu\u00e9ue', 't')")).isEqualTo("23514 tenants_queue_valid");
            long id = insertedJob();
            assertThat(refusal("UPDATE jobs SET task = 'bad task' WHERE id = ?", id)).isEqualTo("23514 jobs_task_valid");
            assertThat(refusal("UPDATE jobs SET tenant = 'x/y' WHERE id = ?", id)).isEqualTo("23514 jobs_tenant_valid");
        }

        @Test
        void everyCharacterOfTheAlphabetAndTheFullLengthAreAccepted() {
            String name = "AZaz09_.:-" + "x".repeat(118);
            db.execute("INSERT INTO tenants (queue, tenant) VALUES (?, ?)", name, name);
            db.execute("INSERT INTO jobs (queue, tenant, task, state) VALUES (?, ?, ?, 'scheduled')", name, name, name);
            assertThat(name).hasSize(128);
        }
    }

    @Nested
    class Vtime {
        @Test
        void aTagThatIsNotAFiniteNumberAtLeastZeroIsRefused() {
            long id = insertedJob();
            for (String bad : List.of("'Infinity'", "'-Infinity'", "'NaN'", "-1", "1e300")) {
                assertThat(refusal("UPDATE jobs SET vtime = " + bad + "::float8 WHERE id = ?", id)).as(bad)
                        .isEqualTo("23514 jobs_vtime_finite");
            }
            db.execute("UPDATE jobs SET vtime = 0 WHERE id = ?", id);
            db.execute("UPDATE jobs SET vtime = 9.9e299 WHERE id = ?", id);
            db.execute("UPDATE jobs SET vtime = NULL WHERE id = ?", id);
        }
    }

    @Nested
    class Payload {
        @Test
        void numbersThatWouldPrintPastAGigabyteAreRefusedOnInsertAndUpdate() {
            assertThat(refusal(insertJob("payload", UNPRINTABLE_PAYLOAD))).isEqualTo("23514 jobs_payload_readable");
            long id = insertedJob();
            assertThat(refusal("UPDATE jobs SET payload = " + UNPRINTABLE_PAYLOAD + " WHERE id = ?", id))
                    .isEqualTo("23514 jobs_payload_readable");
            Throwable t = catchThrowable(() -> db.execute(insertJob("payload", "'[1e131071]'")));
            assertThat(t).hasMessageContaining("payload holds a number that PostgreSQL would print with more than 1000 digits");
        }

        @Test
        void eachNumberMayPrintWithAtMostAsManyDigitsAsAWorkerParses() {
            assertThat(JsonNumbers.MAX_NUMBER_LENGTH).isEqualTo(1000);
            db.execute(insertJob("payload", "'[1e999, -1e999, 1e-999, 1.5e-998]'")); // 1,000 digits each
            assertThat(refusal(insertJob("payload", "'[1e1000]'"))).isEqualTo("23514 jobs_payload_readable");
            assertThat(refusal(insertJob("payload", "'{\"a\": [1e-1000]}'"))).isEqualTo("23514 jobs_payload_readable");
        }

        @Test
        void allNumbersTogetherMayPrintAsTheTextLimitPlusTheGrowthLimit() {
            // 2,097 x 1e999 print 1,000 characters each; one more number makes up the rest exactly
            long rest = MAX_PRINTED_NUMBERS - 2_097_000;
            String atLimit = "('[' || repeat('1e999,', 2097) || '1e" + (rest - 1) + "]')::jsonb";
            String overLimit = "('[' || repeat('1e999,', 2097) || '1e" + rest + "]')::jsonb";
            db.execute(insertJob("payload", atLimit));
            assertThat(refusal(insertJob("payload", overLimit))).isEqualTo("23514 jobs_payload_readable");
        }

        @Test
        void theStoredFormIsBoundedAtEightTimesTheDomainsTextLimit() {
            long overhead = db.dsl().resultQuery("SELECT pg_column_size(to_jsonb(repeat('x', 100))) - 100").fetchSingle(0, Long.class);
            long fits = MAX_STORED_PAYLOAD_BYTES - overhead;
            db.execute(insertJob("payload", "to_jsonb(repeat('x', " + fits + "))"));
            assertThat(refusal(insertJob("payload", "to_jsonb(repeat('x', " + (fits + 1) + "))")))
                    .isEqualTo("23514 jobs_payload_readable");
        }

        @Test
        void thePayloadsTheDomainAcceptsAtItsLimitsAreStored() {
            PostgresJobStore store = new PostgresJobStore(db.dataSource());
            // binary form six times the text: 1 MiB of [0,0,...]
            String zeros = "[" + "0,".repeat((Job.MAX_PAYLOAD_BYTES - 3) / 2) + "0]";
            assertThat(zeros).hasSizeLessThanOrEqualTo(Job.MAX_PAYLOAD_BYTES);
            assertThat(store.enqueue(NewJob.of(TenantId.of("t"), Q, TASK, zeros)).job().state()).isEqualTo(JobState.QUEUED);
            // as much growth as allowed (1,053 x 1e999 grow 995 characters each), the rest of the MiB in small numbers
            String grown = "[" + "1e999,".repeat(1053);
            grown = grown + "1,".repeat((Job.MAX_PAYLOAD_BYTES - grown.length()) / 2 - 1) + "1]";
            assertThat(grown).hasSizeLessThanOrEqualTo(Job.MAX_PAYLOAD_BYTES);
            assertThat(JsonNumbers.unreadablePayload("payload", grown)).isEmpty();
            assertThat(store.enqueue(NewJob.of(TenantId.of("t"), Q, TASK, grown)).job().state()).isEqualTo(JobState.QUEUED);
        }
    }

    /** The Java doors refuse the same before the database is reached, naming the field. */
    @Nested
    class JavaClients {
        static final String BOMB = "[" + "1e131071,".repeat(8199) + "1e131071]";

        @Test
        void newJobsNamingTheFieldAtFault() {
            assertThatThrownBy(() -> TaskName.of("bad task")).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("task must be 1-128 characters");
            assertThatThrownBy(() -> NewJob.of(TenantId.of("t"), Q, TASK, BOMB))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("payload holds numbers");
            String big = "\"" + "x".repeat(Job.MAX_PAYLOAD_BYTES) + "\"";
            assertThatThrownBy(() -> NewJob.of(TenantId.of("t"), Q, TASK, big))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("payload is 1048578 bytes");
            assertThatThrownBy(() -> new NewJobBatch(TenantId.of("t"), Q, TASK, List.of("{}", big), 3, Duration.ZERO))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("payloads[1] is 1048578 bytes");
        }

        @Test
        void theDatabasesRefusalBehindTheJavaClientStillNamesTheField() throws SQLException {
            // Enqueuer is what JobClient and the store share; called directly it skips NewJob's checks,
            // as a client of an older jobq would, and meets the schema's rule instead.
            try (Connection c = db.newConnection()) {
                c.setAutoCommit(false);
                Throwable t = catchThrowable(() -> Enqueuer.insert(JobqSchema.DEFAULT.dsl(c), TenantId.of("t"), Q,
                        TASK, List.of(BOMB), 3, Duration.ZERO, Optional.empty(), 0));
                c.rollback();
                assertThat(t).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageStartingWith("payload refused by the database (jobs_payload_readable): payload holds a number");
            }
            assertThat(db.dsl().fetchCount(DSL.table("jobs"))).as("nothing written").isZero();
        }
    }
}
