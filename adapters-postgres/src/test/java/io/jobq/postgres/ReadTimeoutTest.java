package io.jobq.postgres;

import static io.jobq.postgres.StoreFixtures.job;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.jobq.application.fake.Await;
import io.jobq.application.port.JobQuery;
import io.jobq.application.port.StoreUnavailableException;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
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
 * {@link PostgresJobStore.Options#readTimeout}: a read for people that cannot finish (here: waiting behind
 * an exclusive lock on the jobs table, as behind a long migration) is cancelled after the timeout and
 * answers {@link StoreUnavailableException} (HTTP 503), instead of holding a pooled connection for as long
 * as the lock lasts; the queue's own statements keep waiting; the connection is fine afterwards.
 */
class ReadTimeoutTest extends PostgresStoreTestCase {

    private static final Duration ONE_SECOND = Duration.ofSeconds(1);

    /** Every read for people the store has, by its operation name. */
    static Stream<Map.Entry<String, Function<PostgresJobStore, Object>>> reads() {
        return Map.<String, Function<PostgresJobStore, Object>>of(
                "list", s -> s.list(JobQuery.firstPage()),
                "summaries", s -> s.summaries(JobQuery.firstPage()),
                "stats", PostgresJobStore::countsByQueueAndState,
                "live counts", PostgresJobStore::liveCountsByQueue,
                "oldest runnable", PostgresJobStore::oldestRunnableAge,
                "cap usage", s -> s.capUsage(10),
                "tenant activity", s -> s.tenantActivity(Optional.empty(), 10),
                "finished per minute", s -> s.finishedPerMinute(Optional.empty(), 60),
                "largest backlogs", s -> s.largestBacklogs(10)).entrySet().stream();
    }

    private ExecutorService threads;
    private Connection locker;

    @BeforeEach
    void lockTheJobsTable() throws Exception {
        store.enqueue(job("acme"));
        threads = Executors.newVirtualThreadPerTaskExecutor();
        locker = db.newConnection();
        locker.setAutoCommit(false);
        try (Statement st = locker.createStatement()) {
            st.execute("LOCK TABLE jobs, tenants IN ACCESS EXCLUSIVE MODE");
        }
    }

    @AfterEach
    void unlock() throws Exception {
        locker.close(); // ends the lock, so nothing the test started is left waiting
        threads.close();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("reads")
    void aReadStuckBehindALockIsCancelledAfterTheTimeoutAndTheStoreWorksAfterwards(Map.Entry<String, Function<PostgresJobStore, Object>> read)
            throws Exception {
        PostgresJobStore guarded = new PostgresJobStore(db.dataSource(), PostgresJobStore.Options.DEFAULTS.withReadTimeout(ONE_SECOND));
        Future<Object> stuck = threads.submit(() -> read.getValue().apply(guarded));
        assertThat(stuck).failsWithin(Duration.ofSeconds(8)).withThrowableOfType(ExecutionException.class)
                .havingCause().isInstanceOf(StoreUnavailableException.class).withMessageContaining("(" + read.getKey() + ")")
                .withMessageContaining("cancelled by its timeout").withMessageContaining("readTimeout");
        locker.rollback();
        assertThat(read.getValue().apply(guarded)).as("the same store, once the lock is gone").isNotNull();
    }

    /** The deliberately wrong variant: with a timeout far beyond the lock, the same read waits for the lock. */
    @Test
    void withoutTheTimeoutTheSameReadWaitsForTheLock() throws Exception {
        PostgresJobStore patient = new PostgresJobStore(db.dataSource(), PostgresJobStore.Options.DEFAULTS.withReadTimeout(Duration.ofSeconds(600)));
        Future<Object> read = threads.submit(() -> (Object) patient.countsByQueueAndState());
        Await.until(Duration.ofSeconds(10), "the read to wait on the lock", () -> db.sessionsWaitingOnLocks() > 0);
        Thread.sleep(2_000); // twice the guarded test's timeout
        assertThat(read).as("still waiting").isNotDone();
        locker.rollback();
        assertThat(read.get(10, TimeUnit.SECONDS)).isNotNull();
    }

    /** The timeout is for reads only: a claim behind the same lock waits, and succeeds once it is gone. */
    @Test
    void theQueuesOwnStatementsHaveNoTimeout() throws Exception {
        PostgresJobStore guarded = new PostgresJobStore(db.dataSource(),
                PostgresJobStore.Options.DEFAULTS.withReadTimeout(ONE_SECOND).withWriteTimeout(ONE_SECOND));
        Future<Object> claim = threads.submit(() -> (Object) guarded.claim(StoreFixtures.claim(StoreFixtures.W1, 1)));
        Await.until(Duration.ofSeconds(10), "the claim to wait on the lock", () -> db.sessionsWaitingOnLocks() > 0);
        Thread.sleep(2_000);
        assertThat(claim).as("waiting, not cancelled, after twice the timeouts").isNotDone();
        locker.rollback();
        assertThat(claim.get(10, TimeUnit.SECONDS)).asList().hasSize(1);
    }

    @Test
    void refusesATimeoutThatIsNotWholeSecondsAndDefaultsTo30s() {
        for (Duration bad : new Duration[] {Duration.ZERO, Duration.ofMillis(500), Duration.ofMillis(1_500), Duration.ofSeconds(-1)}) {
            assertThatThrownBy(() -> PostgresJobStore.Options.DEFAULTS.withReadTimeout(bad))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("readTimeout");
        }
        assertThat(PostgresJobStore.Options.DEFAULTS.withReadTimeout(ONE_SECOND).readTimeout()).isEqualTo(ONE_SECOND);
        assertThat(PostgresJobStore.Options.DEFAULTS.readTimeout()).isEqualTo(Duration.ofSeconds(30));
    }
}
