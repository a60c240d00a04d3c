package io.jobq.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import io.jobq.application.fake.Await;
import io.jobq.application.port.VacuumHealth.TableStats;
import io.jobq.application.worker.HandlerRegistry;
import io.jobq.application.worker.Worker;
import io.jobq.application.worker.WorkerSettings;
import io.jobq.domain.job.QueueName;
import io.jobq.postgres.VacuumFixtures.HeldSnapshot;
import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * jobq's own VACUUM for when autovacuum will not clean its tables. Each test switches autovacuum off for
 * jobs through the table's storage parameter, so it behaves the same on a server with autovacuum on.
 */
@ExtendWith(PostgresDatabaseExtension.class)
class SelfVacuumTest {
    static final Duration SOON = Duration.ofSeconds(30);
    /** More dead row versions than the threshold of an empty jobs table (1,000 + 1 % of its rows). */
    static final int CHURN = 3000;

    TestDatabase db;
    PostgresJobStore store;
    /** The statistics keep the last VACUUM across tests (TRUNCATE does not reset it): compare with this. */
    Optional<Instant> lastVacuumBefore;

    @BeforeEach
    void setUp(TestDatabase db) throws Exception {
        this.db = db;
        VacuumFixtures.reset(db);
        store = storeOn(db.dataSource(), PostgresJobStore.Options.DEFAULTS.withSelfVacuumInterval(Duration.ofMillis(1)));
        lastVacuumBefore = jobs().lastVacuum();
    }

    static PostgresJobStore storeOn(javax.sql.DataSource ds, PostgresJobStore.Options options) {
        return new PostgresJobStore(ds, options);
    }

    TableStats jobs() {
        return store.vacuumHealth().orElseThrow().table("jobs").orElseThrow();
    }

    void churnPastTheThreshold() throws Exception {
        VacuumFixtures.churn(db, CHURN);
        Await.until(SOON, "dead row versions past the threshold in the statistics", () -> jobs().needsVacuum());
    }

    @Test
    void aRunningWorkerVacuumsJobsOnceDeadRowsPassTheThreshold() throws Exception {
        churnPastTheThreshold();
        long dead = jobs().deadTuples();
        // Another queue: its claims never walk the churned rows' index entries, whose heap pages they would
        // prune, lowering the dead count below the threshold before maintenance looks.
        Worker worker = Worker.builder(store, HandlerRegistry.withBuiltIns()).settings(WorkerSettings.builder()
                .queues(QueueName.of("elsewhere")).listen(false).maintenanceInterval(Duration.ofMillis(100)).build()).build();
        worker.start();
        try {
            // A VACUUM that runs while some other session of the shared server holds back the xmin horizon
            // removes nothing; the worker keeps vacuuming while the table needs it, so wait for the outcome.
            Await.until(SOON, "the worker's maintenance vacuumed jobs clean", () -> {
                TableStats now = jobs();
                return !now.lastVacuum().equals(lastVacuumBefore) && now.deadTuples() < now.vacuumThreshold();
            });
            assertThat(jobs().deadTuples()).isLessThan(dead);
        } finally {
            worker.close();
        }
    }

    @Test
    void vacuumCannotRemoveWhatAHeldSnapshotMayStillSee() throws Exception {
        try (HeldSnapshot snapshot = new HeldSnapshot(db)) {
            churnPastTheThreshold();
            assertThat(store.vacuumIfNeeded()).as("it ran").isTrue();
            TableStats pinned = jobs();
            assertThat(pinned.lastVacuum()).isNotEqualTo(lastVacuumBefore);
            assertThat(pinned.deadTuples()).isGreaterThanOrEqualTo(CHURN);
        }
        Await.until(SOON, "a vacuum after the snapshot ended", () -> store.vacuumIfNeeded());
        assertThat(jobs().deadTuples()).isLessThan(jobs().vacuumThreshold());
    }

    @Test
    void belowTheThresholdNothingIsVacuumed() throws Exception {
        VacuumFixtures.churn(db, 100);
        assertThat(store.vacuumIfNeeded()).isFalse();
        assertThat(jobs().lastVacuum()).isEqualTo(lastVacuumBefore);
    }

    @Test
    void disabledItNeverVacuums() throws Exception {
        churnPastTheThreshold();
        PostgresJobStore disabled = storeOn(db.dataSource(), PostgresJobStore.Options.DEFAULTS.withoutSelfVacuum());
        assertThat(disabled.vacuumIfNeeded()).isFalse();
        assertThat(disabled.vacuumIfNeeded()).isFalse();
        assertThat(jobs().lastVacuum()).isEqualTo(lastVacuumBefore);
    }

    /** Without ownership it says so once and stops trying: never an error, never a failing maintenance pass. */
    @Test
    void aRoleThatOwnsNeitherTheTablesNorTheDatabaseDoesNotVacuum() throws Exception {
        churnPastTheThreshold();
        try (HikariDataSource plain = VacuumFixtures.pool(db, "SET ROLE pg_signal_backend")) {
            PostgresJobStore unprivileged = storeOn(plain, PostgresJobStore.Options.DEFAULTS.withSelfVacuumInterval(Duration.ofMillis(1)));
            assertThat(unprivileged.vacuumIfNeeded()).isFalse();
            assertThat(unprivileged.vacuumIfNeeded()).isFalse();
        }
        assertThat(jobs().lastVacuum()).isEqualTo(lastVacuumBefore);
    }

    /**
     * VACUUM throttled to last well over the session's statement_timeout, which the store's own queries keep.
     * The timeout is 1 s, not less: the catalog queries around the VACUUM run under it on a fresh backend, and
     * a loaded CI machine has taken over 200 ms for one. Throttled (every page it touches costs more than the
     * limit of 1, so it sleeps 4–16 ms), the VACUUM takes about 3 s here, the check around it a few ms.
     */
    @Test
    void aStatementTimeoutOnJobqsSessionsDoesNotCancelItsVacuum() throws Exception {
        churnPastTheThreshold();
        try (HikariDataSource limited = VacuumFixtures.pool(db,
                "SET statement_timeout = '1s'; SET vacuum_cost_delay = 4; SET vacuum_cost_limit = 1")) {
            PostgresJobStore s = storeOn(limited, PostgresJobStore.Options.DEFAULTS.withSelfVacuumInterval(Duration.ofMillis(1)));
            long start = System.nanoTime();
            assertThat(s.vacuumIfNeeded()).isTrue();
            assertThat(Duration.ofNanos(System.nanoTime() - start)).as("throttled past the timeout").isGreaterThan(Duration.ofSeconds(1));
            assertThat(jobs().lastVacuum()).isNotEqualTo(lastVacuumBefore);
            try (var c = limited.getConnection(); var st = c.createStatement(); var rs = st.executeQuery("SHOW statement_timeout")) {
                rs.next();
                assertThat(rs.getString(1)).isEqualTo("1s");
            }
        }
    }

    /**
     * Workers take turns at upkeep, but each store keeps its own interval: without a shared check, N workers
     * would VACUUM a busy table N times an interval. Once one store has vacuumed jobs, another with a
     * one-minute interval, finding it past the threshold again at once, leaves it alone; the same call from a
     * store whose interval has already passed since that VACUUM (1 ms: the check's wrong variant) vacuums.
     */
    @Test
    void aTableAnotherWorkerVacuumedWithinTheIntervalIsLeftAlone() throws Exception {
        churnPastTheThreshold();
        assertThat(store.vacuumIfNeeded()).as("the first store vacuums").isTrue();
        Optional<Instant> first = jobs().lastVacuum();
        assertThat(first).isNotEqualTo(lastVacuumBefore);
        churnPastTheThreshold();

        PostgresJobStore minutely = storeOn(db.dataSource(), PostgresJobStore.Options.DEFAULTS.withSelfVacuumInterval(Duration.ofMinutes(1)));
        assertThat(minutely.vacuumIfNeeded()).as("another store, within its minute of that VACUUM").isFalse();
        assertThat(jobs().lastVacuum()).isEqualTo(first);

        Thread.sleep(5); // past the 1 ms interval of the store below, by the server's clock too
        PostgresJobStore pastItsInterval = storeOn(db.dataSource(), PostgresJobStore.Options.DEFAULTS.withSelfVacuumInterval(Duration.ofMillis(1)));
        assertThat(pastItsInterval.vacuumIfNeeded()).as("a store whose interval has passed since").isTrue();
        assertThat(jobs().lastVacuum()).isNotEqualTo(first);
    }

    @Test
    void twoStoresDoNotVacuumAtTheSameTime() throws Exception {
        churnPastTheThreshold();
        // the other worker holds the lock (as while its VACUUM runs)
        try (var other = db.newConnection(); var st = other.createStatement()) {
            st.execute("SELECT pg_advisory_lock(" + SelfVacuum.LOCK_NAMESPACE + ", " + SelfVacuum.LOCK_VACUUM + ")");
            assertThat(store.vacuumIfNeeded()).isFalse();
            assertThat(jobs().lastVacuum()).isEqualTo(lastVacuumBefore);
            // released here, not by closing: a closed session's backend lets go a moment after the client
            st.execute("SELECT pg_advisory_unlock(" + SelfVacuum.LOCK_NAMESPACE + ", " + SelfVacuum.LOCK_VACUUM + ")");
        }
        assertThat(store.vacuumIfNeeded()).isTrue();
    }
}
