package io.jobq.postgres;

import static io.jobq.postgres.StoreFixtures.job;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.jobq.application.fake.Await;
import io.jobq.application.port.NewJobBatch;
import io.jobq.application.port.ScheduleDefinition;
import io.jobq.application.port.StoreUnavailableException;
import io.jobq.application.port.TenantUpdate;
import io.jobq.application.schedule.CronSchedule;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.schedule.ScheduleName;
import io.jobq.domain.tenant.TenantId;
import io.jobq.domain.fairness.TenantWeight;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link PostgresJobStore.Options#writeTimeout}: a write on a caller's behalf that waits for a lock (a
 * tenant's row an application's open transaction holds through {@link JobClient}; a migration's table lock)
 * is cancelled after the timeout, changes nothing and answers {@link StoreUnavailableException} (HTTP 503),
 * instead of holding a pooled connection for as long as the lock lasts; other tenants' writes go on.
 */
class WriteTimeoutTest extends PostgresStoreTestCase {
    private static final Duration ONE_SECOND = Duration.ofSeconds(1);
    private static final TenantId ACME = TenantId.of("acme");

    /** Every write on a caller's behalf the store has, by its operation name. */
    static Stream<Map.Entry<String, Function<PostgresJobStore, Object>>> writes() {
        return Map.<String, Function<PostgresJobStore, Object>>of(
                "enqueue", s -> s.enqueue(job("acme")),
                "enqueue batch", s -> s.enqueueBatch(new NewJobBatch(ACME, QueueName.DEFAULT, TaskName.of("noop"), List.of("{}"), 3,
                        Duration.ZERO)),
                "cancel", s -> s.cancel(JobId.of(1)),
                "retry", s -> s.retryDead(JobId.of(1)),
                "configure tenant", s -> s.configureTenant(TenantUpdate.weight(ACME, QueueName.DEFAULT, TenantWeight.of(2))),
                "put schedule", s -> s.putSchedule(new ScheduleDefinition(ScheduleName.of("nightly"),
                        CronSchedule.parse("0 3 * * *", ZoneOffset.UTC), job("acme"))),
                "delete schedule", s -> s.deleteSchedule(ScheduleName.of("nightly"))).entrySet().stream();
    }

    private ExecutorService threads;
    private Connection locker;

    @BeforeEach
    void openTheLocker() throws Exception {
        store.enqueue(job("acme"));
        threads = Executors.newVirtualThreadPerTaskExecutor();
        locker = db.newConnection();
        locker.setAutoCommit(false);
    }

    @AfterEach
    void closeTheLocker() throws Exception {
        locker.close(); // ends its locks, so nothing the test started is left waiting
        threads.close();
    }

    private void lockTheTables() throws Exception {
        try (Statement st = locker.createStatement()) {
            st.execute("LOCK TABLE jobs, tenants, schedules IN ACCESS EXCLUSIVE MODE");
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("writes")
    void aWriteStuckBehindALockIsCancelledAfterTheTimeoutAndTheStoreWorksAfterwards(Map.Entry<String, Function<PostgresJobStore, Object>> write)
            throws Exception {
        PostgresJobStore guarded = new PostgresJobStore(db.dataSource(), PostgresJobStore.Options.DEFAULTS.withWriteTimeout(ONE_SECOND));
        lockTheTables();
        Future<Object> stuck = threads.submit(() -> write.getValue().apply(guarded));
        assertThat(stuck).failsWithin(Duration.ofSeconds(8)).withThrowableOfType(ExecutionException.class)
                .havingCause().isInstanceOf(StoreUnavailableException.class).withMessageContaining("(" + write.getKey() + ")")
                .withMessageContaining("write was cancelled by its timeout").withMessageContaining("writeTimeout");
        locker.rollback();
        assertThat(write.getValue().apply(guarded)).as("the same store, once the lock is gone").isNotNull();
    }

    /**
     * The case it is for: an application enqueues in a transaction it keeps open, holding the tenant's row.
     * The API's enqueue for that tenant gives up after the timeout having written nothing, while another
     * tenant's enqueue goes through at once.
     */
    @Test
    void anEnqueueBehindAnOpenApplicationTransactionGivesUpAndWritesNothing() throws Exception {
        PostgresJobStore guarded = new PostgresJobStore(db.dataSource(), PostgresJobStore.Options.DEFAULTS.withWriteTimeout(ONE_SECOND));
        new JobClient().enqueue(locker, job("acme")); // acme's row stays locked while locker is open
        Future<Object> stuck = threads.submit(() -> guarded.enqueue(job("acme")));
        assertThat(guarded.enqueue(job("other"))).as("another tenant's enqueue, meanwhile").isNotNull();
        assertThat(stuck).failsWithin(Duration.ofSeconds(8)).withThrowableOfType(ExecutionException.class)
                .havingCause().isInstanceOf(StoreUnavailableException.class).withMessageContaining("writeTimeout");
        locker.rollback();
        assertThat(db.dsl().fetchCount(db.dsl().selectFrom("jobs").where("tenant = 'acme'"))).as("only the job from before").isEqualTo(1);
    }

    /** The deliberately wrong variant: with a timeout far beyond the lock, the same enqueue waits for it. */
    @Test
    void withoutTheTimeoutTheSameEnqueueWaitsForTheLock() throws Exception {
        PostgresJobStore patient = new PostgresJobStore(db.dataSource(), PostgresJobStore.Options.DEFAULTS.withWriteTimeout(Duration.ofSeconds(600)));
        new JobClient().enqueue(locker, job("acme"));
        Future<Object> waiting = threads.submit(() -> patient.enqueue(job("acme")));
        Await.until(Duration.ofSeconds(10), "the enqueue to wait on the lock", () -> db.sessionsWaitingOnLocks() > 0);
        Thread.sleep(2_000); // twice the guarded test's timeout
        assertThat(waiting).as("still waiting").isNotDone();
        locker.rollback();
        assertThat(waiting.get(10, TimeUnit.SECONDS)).isNotNull();
    }

    @Test
    void refusesATimeoutThatIsNotWholeSecondsAndDefaultsTo10s() {
        for (Duration bad : new Duration[] {Duration.ZERO, Duration.ofMillis(500), Duration.ofMillis(1_500), Duration.ofSeconds(-1)}) {
            assertThatThrownBy(() -> PostgresJobStore.Options.DEFAULTS.withWriteTimeout(bad))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("writeTimeout");
        }
        assertThat(PostgresJobStore.Options.DEFAULTS.withWriteTimeout(ONE_SECOND).writeTimeout()).isEqualTo(ONE_SECOND);
        assertThat(PostgresJobStore.Options.DEFAULTS.writeTimeout()).isEqualTo(Duration.ofSeconds(10));
        assertThat(PostgresJobStore.Options.DEFAULTS.withReadTimeout(ONE_SECOND).writeTimeout()).as("kept by the other copies")
                .isEqualTo(Duration.ofSeconds(10));
    }
}
