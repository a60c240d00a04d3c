package io.jobq.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import io.jobq.application.fake.Await;
import io.jobq.application.port.JobQueueException;
import io.jobq.application.port.NewJob;
import io.jobq.application.port.StoreConflictException;
import io.jobq.application.port.TenantSettings;
import io.jobq.domain.fairness.TenantWeight;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.tenant.TenantId;
import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.jooq.exception.DataAccessException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A write the database aborts for a concurrent transaction (serialization failure 40001, deadlock
 * 40P01) wrote nothing, so the store runs it again instead of handing the caller a failure.
 *
 * <p>The real scenario: a server whose {@code default_transaction_isolation} is SERIALIZABLE (some
 * shops set it cluster-wide). A test transaction updates a tenant's row and holds it; the store's
 * write of the same row waits for it; the test commits; PostgreSQL aborts the waiting write with
 * 40001, because at SERIALIZABLE it may not overwrite a version its snapshot never saw. The same
 * statement run bare on the same pool fails with 40001 in the same scenario: proof that the scenario
 * provokes the conflict the store absorbed.
 */
@ExtendWith(PostgresDatabaseExtension.class)
class ConflictRetryTest {
    static final Duration SOON = Duration.ofSeconds(10);
    static final TenantId TENANT = TenantId.of("acme");
    static final QueueName QUEUE = QueueName.DEFAULT;

    TestDatabase db;
    HikariDataSource serializable;
    PostgresJobStore store;

    @BeforeEach
    void setUp(TestDatabase db) {
        this.db = db;
        db.emptyTables();
        serializable = db.newPool(2, "TRANSACTION_SERIALIZABLE");
        store = new PostgresJobStore(serializable);
        store.setWeight(TENANT, QUEUE, new TenantWeight(1));
    }

    @AfterEach
    void tearDown() {
        serializable.close();
    }

    @Test
    void aWeightChangeThatCollidesWithAConcurrentUpdateIsRetriedAndApplied() throws Exception {
        TenantSettings applied = whileTheTenantRowIsUpdatedConcurrently(
                () -> store.setWeight(TENANT, QUEUE, new TenantWeight(5)));

        assertThat(applied.weight().value()).isEqualTo(5.0);
        assertThat(weightInTheTable()).as("the retried write landed after the concurrent one").isEqualTo(5.0);
    }

    @Test
    void anEnqueueThatCollidesWithAConcurrentUpdateIsRetriedAndWritesOneJob() throws Exception {
        Job job = whileTheTenantRowIsUpdatedConcurrently(
                () -> store.enqueue(NewJob.of(TENANT, QUEUE, TaskName.of("t"), "{}")).job());

        assertThat(store.get(job.id())).isPresent();
        assertThat(db.dsl().fetchCount(db.dsl().selectFrom("jobs"))).as("one job, not one per try").isEqualTo(1);
    }

    @Test
    void theSameWriteRunBareInTheSameScenarioFailsWithASerializationFailure() {
        assertThatThrownBy(() -> whileTheTenantRowIsUpdatedConcurrently(() -> {
            try (Connection c = serializable.getConnection();
                 PreparedStatement st = c.prepareStatement("UPDATE tenants SET weight = 5 WHERE queue = ? AND tenant = ?")) {
                st.setString(1, QUEUE.value());
                st.setString(2, TENANT.value());
                return st.executeUpdate();
            } catch (SQLException e) {
                throw new IllegalStateException(e.getSQLState(), e);
            }
        })).hasRootCauseInstanceOf(SQLException.class).hasMessageContaining(StoreErrors.SERIALIZATION_FAILURE);
    }

    /**
     * Holds an uncommitted update of the tenant's row, starts {@code write} on another thread, waits
     * until that write is blocked on the row lock, commits, and returns what the write returned.
     */
    <T> T whileTheTenantRowIsUpdatedConcurrently(Supplier<T> write) throws Exception {
        try (Connection holder = db.newConnection()) {
            holder.setAutoCommit(false);
            try (PreparedStatement st = holder.prepareStatement(
                    "UPDATE tenants SET weight = 2 WHERE queue = ? AND tenant = ?")) {
                st.setString(1, QUEUE.value());
                st.setString(2, TENANT.value());
                assertThat(st.executeUpdate()).isEqualTo(1);
            }
            CompletableFuture<T> result = CompletableFuture.supplyAsync(write);
            Await.until(SOON, "the write waits for the tenant's row lock", () -> db.sessionsWaitingOnLocks() > 0);
            holder.commit();
            try {
                return result.get(SOON.toSeconds(), TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException e) {
                throw (Exception) e.getCause();
            }
        }
    }

    double weightInTheTable() {
        return db.dsl().resultQuery("SELECT weight FROM tenants WHERE queue = {0} AND tenant = {1}",
                QUEUE.value(), TENANT.value()).fetchSingle(0, Double.class);
    }

    /** The retry rule itself, on driver exceptions carrying the SQLSTATEs PostgreSQL sends. */
    @Nested
    class RetryRule {
        final AtomicInteger tries = new AtomicInteger();

        <T> Supplier<T> failing(String sqlState) {
            return () -> {
                tries.incrementAndGet();
                throw new DataAccessException("boom", new SQLException("aborted", sqlState));
            };
        }

        @Test
        void aPersistentDeadlockIsTriedThreeTimesThenReportedAsAConflict() {
            assertThatThrownBy(() -> PostgresJobStore.run("set weight", failing(StoreErrors.DEADLOCK_DETECTED)))
                    .isInstanceOf(ConcurrentUpdateException.class)
                    .isInstanceOf(StoreConflictException.class)
                    .hasMessageContaining("set weight");
            assertThat(tries).hasValue(PostgresJobStore.CONFLICT_ATTEMPTS);
        }

        @Test
        void aConflictThatClearsOnTheSecondTryIsInvisibleToTheCaller() {
            String answer = PostgresJobStore.run("enqueue", () -> {
                if (tries.incrementAndGet() == 1) {
                    throw new DataAccessException("boom", new SQLException("aborted", StoreErrors.SERIALIZATION_FAILURE));
                }
                return "ok";
            });
            assertThat(answer).isEqualTo("ok");
            assertThat(tries).hasValue(2);
        }

        @Test
        void anyOtherFailureIsNotRetried() {
            assertThatThrownBy(() -> PostgresJobStore.run("enqueue", failing("23514")))
                    .isInstanceOf(JobQueueException.class)
                    .isNotInstanceOf(StoreConflictException.class);
            assertThat(tries).hasValue(1);
        }
    }
}
