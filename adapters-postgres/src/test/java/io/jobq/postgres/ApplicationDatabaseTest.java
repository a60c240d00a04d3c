package io.jobq.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import io.jobq.application.port.EnqueueResult;
import io.jobq.application.port.JobStore;
import io.jobq.application.port.JobStoreContract;
import io.jobq.application.port.NewJob;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.tenant.TenantId;
import io.jobq.postgres.testing.ApplicationDatabase;
import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * jobq inside an application's own database (issue 13): the application already has {@code public.jobs},
 * {@code public.tenants} and its own Flyway history with its V1, and its sessions' {@code search_path} is
 * {@code public}. jobq migrates into schema {@code jobq} beside them, leaves them untouched, the
 * application's Flyway keeps working afterwards, and every store operation (the whole port contract) and
 * every enqueue in the caller's transaction runs on that search_path, where an unqualified {@code jobs}
 * would be the application's table.
 */
@ExtendWith(PostgresDatabaseExtension.class)
class ApplicationDatabaseTest {
    static final QueueName Q = QueueName.DEFAULT;
    static final TaskName TASK = TaskName.of("send_receipt");

    /** The application's pool: no currentSchema, so search_path is the server's default ("$user", public). */
    static HikariDataSource app;
    static int jobqMigrationsApplied;

    TestDatabase db;

    /** Once per class (its database is shared): the application's V1, then jobq, then the application's V2. */
    @BeforeEach
    void prepare(TestDatabase db) {
        this.db = db;
        if (app != null) return;
        app = ApplicationDatabase.pool(db);
        ApplicationDatabase.beforeJobq(db);
        jobqMigrationsApplied = Migrations.migrate(app);
        ApplicationDatabase.flyway(db).load().migrate();
    }

    @AfterAll
    static void closePool() {
        if (app != null) app.close();
        app = null;
    }

    long count(String sql) {
        return DSL.using(app, org.jooq.SQLDialect.POSTGRES).resultQuery(sql).fetchSingle(0, Long.class);
    }

    @Test
    void jobqMigratesIntoItsOwnSchemaAndLeavesTheApplicationsTablesAndHistoryAlone() {
        assertThat(jobqMigrationsApplied).isEqualTo(StoreFixtures.shippedMigrations());
        assertThat(count("SELECT count(*) FROM public.flyway_schema_history WHERE success")).as("the application's V1 and V2 only")
                .isEqualTo(2);
        assertThat(count("SELECT count(*) FROM jobq.flyway_schema_history WHERE success AND version IS NOT NULL")).isEqualTo(StoreFixtures.shippedMigrations());
        assertThat(count("SELECT count(*) FROM tenants WHERE name = 'acme'")).as("public.tenants kept its row").isEqualTo(1);
        assertThat(count("SELECT count(*) FROM information_schema.columns WHERE table_schema = 'public' AND table_name = 'jobs'"))
                .as("public.jobs kept its two columns").isEqualTo(2);
        assertThat(count("SELECT count(*) FROM pg_proc WHERE proname LIKE 'jobq\\_%' AND pronamespace = 'public'::regnamespace"))
                .as("no jobq function in public").isZero();
        // a second run of each finds nothing to do and no mismatch
        assertThat(Migrations.migrate(app)).isZero();
        Migrations.requireCurrent(app);
        assertThat(ApplicationDatabase.flyway(db).load().validateWithResult().validationSuccessful).isTrue();
    }

    @Test
    void theApplicationsDefaultFlywayLocationFindsNoneOfJobqsScripts() {
        assertThat(Thread.currentThread().getContextClassLoader().getResource("db/migration")).isNull();
    }

    @Test
    void anEnqueueInTheCallersTransactionLeavesItsSearchPathAndCommitsOrRollsBackWithIt() throws SQLException {
        JobClient client = new JobClient();
        NewJob job = NewJob.of(TenantId.of("acme"), Q, TASK, "{\"order\":1}");
        long before = count("SELECT count(*) FROM jobq.jobs");
        try (Connection c = app.getConnection()) {
            c.setAutoCommit(false);
            try (Statement st = c.createStatement()) {
                st.execute("INSERT INTO jobs (title) VALUES ('the application''s own job row')");
            }
            assertThat(client.enqueue(c, job)).isInstanceOf(EnqueueResult.Created.class);
            c.rollback();
            assertThat(searchPath(c)).isEqualTo("\"$user\", public");
            assertThat(client.enqueue(c, job)).isInstanceOf(EnqueueResult.Created.class);
            c.commit();
        }
        assertThat(count("SELECT count(*) FROM jobq.jobs")).as("only the committed enqueue").isEqualTo(before + 1);
        assertThat(count("SELECT count(*) FROM public.jobs")).as("the rolled-back row is gone").isZero();
        // and through a jOOQ transaction of the application's own
        DSL.using(app, org.jooq.SQLDialect.POSTGRES).transaction(cfg -> {
            cfg.dsl().execute("INSERT INTO jobs (title) VALUES ('kept')");
            client.enqueue(cfg, job);
        });
        assertThat(count("SELECT count(*) FROM jobq.jobs")).isEqualTo(before + 2);
        assertThat(count("SELECT count(*) FROM public.jobs")).isEqualTo(1);
    }

    static String searchPath(Connection c) throws SQLException {
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SHOW search_path")) {
            rs.next();
            return rs.getString(1);
        }
    }

    @Test
    void theStoresOwnMaintenanceQueriesFindJobqsTables() {
        PostgresJobStore store = new PostgresJobStore(app);
        assertThat(store.vacuumHealth().orElseThrow().table("jobs")).isPresent();
        store.vacuumIfNeeded();
        assertThat(store.countsByQueueAndState()).isNotNull();
        assertThat(store.oldestRunnableAge()).isNotNull();
        assertThat(store.largestBacklogs(5)).isNotNull();
        store.ping();
    }

    /** The whole port contract, on the application's search_path. */
    @Nested
    class Contract extends JobStoreContract {
        PostgresJobStore store;

        @BeforeEach
        void setUp() {
            db.execute("TRUNCATE jobq.jobs, jobq.tenants, jobq.queues, jobq.measured_runs, jobq.workers, jobq.schedules, jobq.schedule_ticks, jobq.api_keys, jobq.upkeep_turn RESTART IDENTITY");
            store = new PostgresJobStore(app);
        }

        @Override
        protected JobStore store() {
            return store;
        }

        @Override
        protected Instant storeNow() {
            return DSL.using(app, org.jooq.SQLDialect.POSTGRES).resultQuery("SELECT now()").fetchSingle(0, OffsetDateTime.class).toInstant();
        }

        @Override
        protected void advanceTime(Duration by) {
            db.execute("""
                    UPDATE jobq.jobs SET run_at = run_at - {0}, locked_until = locked_until - {0}, created_at = created_at - {0},
                        started_at = started_at - {0}, finished_at = finished_at - {0}""",
                    DSL.field("{0}::bigint * interval '1 millisecond'", Object.class, by.toMillis()));
            db.execute("UPDATE jobq.workers SET last_seen = last_seen - {0}, started_at = started_at - {0}",
                    DSL.field("{0}::bigint * interval '1 millisecond'", Object.class, by.toMillis()));
        }
    }
}
