package io.jobq.postgres;

import static io.jobq.postgres.StoreFixtures.job;
import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import io.jobq.application.fake.Await;
import io.jobq.application.port.VacuumHealth;
import io.jobq.application.port.VacuumHealth.Horizon;
import io.jobq.application.port.VacuumHealth.HorizonSource;
import io.jobq.application.port.VacuumHealth.TableStats;
import io.jobq.postgres.VacuumFixtures.HeldSnapshot;
import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import java.time.Duration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * vacuumHealth on real PostgreSQL: a snapshot held in another session shows as a session horizon whose age
 * grows while it is held and falls back once it ends; dead row versions of jobs show after churn. Other
 * classes run concurrently on the same server (other databases), so xid ages are asserted as lower bounds.
 */
@ExtendWith(PostgresDatabaseExtension.class)
class VacuumHealthTest {
    static final Duration STATS = Duration.ofSeconds(30);

    TestDatabase db;
    PostgresJobStore store;

    @BeforeEach
    void setUp(TestDatabase db) throws Exception {
        this.db = db;
        VacuumFixtures.reset(db);
        store = new PostgresJobStore(db.dataSource());
    }

    Horizon session(PostgresJobStore s) {
        return s.vacuumHealth().orElseThrow().horizons().stream()
                .filter(h -> h.source() == HorizonSource.SESSION).findFirst().orElseThrow();
    }

    TableStats jobs() {
        return store.vacuumHealth().orElseThrow().table("jobs").orElseThrow();
    }

    @Test
    void aHeldSnapshotIsASessionHorizonThatAgesUntilItsTransactionEnds() throws Exception {
        Horizon held;
        try (HeldSnapshot snapshot = new HeldSnapshot(db)) {
            Horizon first = session(store);
            for (int i = 0; i < 20; i++) store.enqueue(job("acme")); // 20 write transactions, 20 xids
            Await.until(Duration.ofSeconds(10), "a second of holding", () -> System.nanoTime() - snapshot.heldSinceNanos > 1_000_000_000L);
            long heldNanos = System.nanoTime() - snapshot.heldSinceNanos;
            held = session(store);
            assertThat(held.age().orElseThrow()).isGreaterThanOrEqualTo(Duration.ofNanos(heldNanos));
            assertThat(held.age().get()).isGreaterThan(first.age().orElseThrow());
            assertThat(held.xidAge()).isGreaterThanOrEqualTo(first.xidAge() + 20);
            assertThat(store.vacuumHealth().orElseThrow().oldest().xidAge()).isGreaterThanOrEqualTo(held.xidAge());
        }
        Horizon after = session(store);
        assertThat(after.age().orElseThrow()).isLessThan(held.age().get());
        assertThat(after.xidAge()).isLessThan(held.xidAge());
    }

    @Test
    void theOtherSourcesAreReportedEvenWhenNothingHoldsBack() {
        VacuumHealth health = store.vacuumHealth().orElseThrow();
        assertThat(health.horizons()).extracting(Horizon::source).containsExactly(HorizonSource.values());
        // slots and standbys have no start time to measure from
        assertThat(health.horizons()).filteredOn(h -> h.source() == HorizonSource.REPLICATION_SLOT
                || h.source() == HorizonSource.STANDBY).allSatisfy(h -> assertThat(h.age()).isEmpty());
    }

    @Test
    void deadRowVersionsOfJobsShowAfterChurn() throws Exception {
        long before = jobs().deadTuples();
        VacuumFixtures.churn(db, 2000);
        Await.until(STATS, "2,000 more dead row versions in the statistics", () -> jobs().deadTuples() >= before + 2000);
        assertThat(jobs().liveTuples()).isGreaterThanOrEqualTo(2000);
    }

    @Test
    void jobsCarriesTheAutovacuumSettingsOfV3AndTheTableSwitchIsSeen() {
        String options = db.dsl().resultQuery("SELECT array_to_string(reloptions, ',') FROM pg_class WHERE oid = 'jobs'::regclass")
                .fetchSingle(0, String.class);
        assertThat(options).contains("autovacuum_vacuum_scale_factor=0.01", "autovacuum_vacuum_threshold=1000",
                "autovacuum_analyze_scale_factor=0.02");
        TableStats jobs = jobs();
        double rows = Math.max(0, db.dsl().resultQuery("SELECT reltuples FROM pg_class WHERE oid = 'jobs'::regclass")
                .fetchSingle(0, Double.class));
        assertThat(jobs.vacuumThreshold()).isEqualTo(Math.round(1000 + 0.01 * rows));
        assertThat(jobs.autovacuumEnabled()).isFalse(); // set off above, whatever the server says
        assertThat(store.vacuumHealth().orElseThrow().tables()).extracting(TableStats::table).containsExactly("jobs", "tenants");
    }

    /**
     * The store's role needs no superuser: a role without pg_read_all_stats still sees another role's
     * snapshot in the xid age. Its start time it cannot see, so the age in seconds misses it (README says to
     * grant pg_monitor for that).
     */
    @Test
    void aRoleWithoutStatsPrivilegesStillSeesAnotherRolesSnapshotByXidAge() throws Exception {
        try (HikariDataSource plain = VacuumFixtures.pool(db, "SET ROLE pg_signal_backend")) {
            PostgresJobStore unprivileged = new PostgresJobStore(plain);
            try (HeldSnapshot snapshot = new HeldSnapshot(db)) {
                for (int i = 0; i < 5; i++) store.enqueue(job("acme"));
                Horizon seen = session(unprivileged);
                assertThat(seen.xidAge()).isGreaterThanOrEqualTo(5);
                assertThat(seen.age()).contains(Duration.ZERO);
            }
        }
    }
}
