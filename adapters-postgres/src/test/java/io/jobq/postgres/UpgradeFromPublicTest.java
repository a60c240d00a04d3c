package io.jobq.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import io.jobq.application.port.ClaimRequest;
import io.jobq.application.port.JobQueueException;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.lease.WorkerId;
import io.jobq.postgres.testing.ApplicationDatabase;
import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import java.time.Duration;
import java.util.List;
import org.flywaydb.core.Flyway;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A database jobq 0.1 set up: its V1 tables and its Flyway history in {@code public}, with a job waiting.
 * The documented upgrade (docs/operations.md, "Upgrading from 0.1") is schema {@code public}; the default
 * schema is refused rather than starting an empty queue beside the waiting job.
 */
@ExtendWith(PostgresDatabaseExtension.class)
class UpgradeFromPublicTest {
    static final JobqSchema PUBLIC = JobqSchema.of("public");

    TestDatabase db;
    HikariDataSource legacy;

    @BeforeEach
    void setUp(TestDatabase db) {
        this.db = db;
        db.execute("DROP SCHEMA IF EXISTS jobq CASCADE");
        db.execute("DROP TABLE IF EXISTS public.jobs, public.tenants, public.flyway_schema_history CASCADE");
        legacy = ApplicationDatabase.pool(db);
        // what 0.1 did: jobq's V1 (unchanged since) into public, history in public.flyway_schema_history
        Flyway.configure().dataSource(legacy).locations(Migrations.LOCATION).target("1").load().migrate();
        DSL.using(legacy, SQLDialect.POSTGRES).execute("""
                INSERT INTO public.tenants (queue, tenant) VALUES ('default', 'acme');
                INSERT INTO public.jobs (queue, tenant, task, payload, state, vtime) VALUES ('default', 'acme', 'noop', '{}', 'queued', 1)""");
    }

    @AfterEach
    void tearDown() {
        legacy.close();
    }

    @Test
    void theDefaultSchemaIsRefusedNamingTheSettingThatKeepsTheWaitingJobs() {
        assertThatThrownBy(() -> Migrations.migrate(legacy))
                .isInstanceOf(JobQueueException.class)
                .hasMessageContaining("JOBQ_SCHEMA=public")
                .hasMessageContaining("public.jobs");
        long schemas = DSL.using(legacy, SQLDialect.POSTGRES)
                .resultQuery("SELECT count(*) FROM pg_namespace WHERE nspname = 'jobq'").fetchSingle(0, Long.class);
        assertThat(schemas).as("nothing created").isZero();
    }

    @Test
    void schemaPublicAppliesTheNewMigrationsInPlaceAndTheWaitingJobRuns() {
        assertThat(Migrations.migrate(legacy, PUBLIC)).as("all but V1").isEqualTo(StoreFixtures.shippedMigrations() - 1);
        Migrations.requireCurrent(legacy, PUBLIC);
        PostgresJobStore store = new PostgresJobStore(legacy, PostgresJobStore.Options.DEFAULTS.withSchema(PUBLIC));
        List<Job> claimed = store.claim(new ClaimRequest(List.of(QueueName.DEFAULT), WorkerId.of("w1"), 10, Duration.ofSeconds(30)));
        assertThat(claimed).hasSize(1);
    }
}
