package io.jobq.postgres;

import static io.jobq.postgres.StoreFixtures.Q;
import static io.jobq.postgres.StoreFixtures.TASK;
import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.application.port.EnqueueResult;
import io.jobq.application.port.NewJob;
import io.jobq.application.port.NewJobBatch;
import io.jobq.application.port.TenantUpdate;
import io.jobq.domain.fairness.Fairness;
import io.jobq.domain.fairness.MaxRunning;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobState;
import io.jobq.domain.tenant.TenantId;
import io.jobq.postgres.testing.JdbcProxies;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * An enqueue with no key and priority 0 is its one statement, committing on its own (Enqueuer#insertCommitted):
 * no transaction, so the tenant's row is locked for that statement only. Jobs that come back held (a cap, a work
 * queue) are released right after, and their tenant's next enqueues take one transaction; a release that fails
 * leaves them held for the sweep and never fails the enqueue, whose job is committed.
 */
class EnqueueCommitsAloneTest extends PostgresStoreTestCase {
    static final TenantId A = TenantId.of("a");

    /** Counts what the store does on its connections: transactions begun, and statements run outside one. */
    static final class Counting {
        final AtomicInteger transactions = new AtomicInteger();
        final AtomicInteger alone = new AtomicInteger();
        /** When set, beginning a transaction fails (after the driver saw it), as a lost connection would. */
        final AtomicBoolean failBegin = new AtomicBoolean();

        DataSource wrap(DataSource target) {
            return JdbcProxies.afterEachCall(DataSource.class, target, (method, args, result) ->
                    method.getName().equals("getConnection") ? connection((Connection) result) : result);
        }

        private Connection connection(Connection target) {
            return JdbcProxies.afterEachCall(Connection.class, target, (method, args, result) -> {
                if (method.getName().equals("setAutoCommit") && Boolean.FALSE.equals(args[0])) {
                    if (failBegin.get()) throw new SQLException("connection lost (test)", "08006");
                    transactions.incrementAndGet();
                }
                if (method.getName().equals("prepareStatement") && target.getAutoCommit()) alone.incrementAndGet();
                return result;
            });
        }
    }

    Counting counting;
    PostgresJobStore counted;

    @BeforeEach
    void countedStore() {
        counting = new Counting();
        counted = new PostgresJobStore(counting.wrap(db.dataSource()));
    }

    void cap(TenantId tenant, int max) {
        store.configureTenant(TenantUpdate.cap(tenant, Q, Optional.of(MaxRunning.of(max))));
    }

    long count(String where) {
        return db.dsl().fetchCount(db.dsl().selectFrom("jobs").where(where));
    }

    String stateInTable(Job job) {
        return db.dsl().resultQuery("SELECT state FROM jobs WHERE id = ?", job.id().value()).fetchSingle(0, String.class);
    }

    @Test
    void anUncappedTenantsEnqueueIsOneStatementThatCommitsOnItsOwn() {
        Job job = counted.enqueue(NewJob.of(A, Q, TASK, "{}")).job();
        counted.enqueueBatch(new NewJobBatch(A, Q, TASK, List.of("{}", "{}"), 5, Duration.ZERO));
        counted.enqueue(NewJob.of(A, Q, TASK, "{}").withDelay(Duration.ofMinutes(5)));

        assertThat(counting.transactions).as("transactions begun").hasValue(0);
        assertThat(counting.alone).as("statements committed on their own").hasValue(3);
        assertThat(job.state()).isEqualTo(JobState.QUEUED);
        assertThat(stateInTable(job)).isEqualTo("queued");
    }

    /** The other path, which a key needs (a taken key rolls the tenant's charge back): the counter sees its transaction. */
    @Test
    void anEnqueueWithAKeyOrAPriorityTakesATransaction() {
        counted.enqueue(NewJob.of(A, Q, TASK, "{}").withIdempotencyKey("k1"));
        counted.enqueue(NewJob.of(A, Q, TASK, "{}").withPriority(3));

        assertThat(counting.transactions).hasValue(2);
        assertThat(counting.alone).hasValue(0);
    }

    @Test
    void aCappedTenantsJobIsReleasedAfterItsStatementAndItsNextEnqueuesTakeOneTransaction() {
        cap(A, 1);
        Job first = counted.enqueue(NewJob.of(A, Q, TASK, "{}")).job();
        assertThat(first.state()).as("released after the statement committed it held").isEqualTo(JobState.QUEUED);
        assertThat(stateInTable(first)).isEqualTo("queued");
        assertThat(counting.alone).as("the statement, then the re-read").hasValue(2);
        assertThat(counting.transactions).as("the release").hasValue(1);

        Job second = counted.enqueue(NewJob.of(A, Q, TASK, "{}")).job();
        assertThat(second.state()).as("over the cap").isEqualTo(JobState.HELD);
        assertThat(counting.alone).as("no statement alone for a tenant known to hold").hasValue(2);
        assertThat(counting.transactions).hasValue(2);
    }

    @Test
    void aWorkQueuesJobsAreReleasedAfterTheirStatement() {
        store.configureQueue(Q, Fairness.WORK);
        Job job = counted.enqueue(NewJob.of(A, Q, TASK, "{}")).job();
        assertThat(job.state()).isEqualTo(JobState.QUEUED);
        assertThat(stateInTable(job)).isEqualTo("queued");

        TenantId b = TenantId.of("b");
        new PostgresJobStore(db.dataSource()).enqueueBatch(new NewJobBatch(b, Q, TASK, List.of("{}", "{}"), 5, Duration.ZERO));
        assertThat(count("tenant = 'b' AND state = 'queued'")).as("a tenant with no measured run: one job tagged").isEqualTo(1);
        assertThat(count("tenant = 'b' AND state = 'held'")).isEqualTo(1);
    }

    /**
     * Many enqueues of a capped tenant at once, each on a store that has not learnt the tenant holds (so each
     * commits its statement alone and releases after): the cap still bounds what is queued, and all are kept.
     * Without the release's wait for the tenant's row, two releases overlap and queue a third (seen in one run
     * of two at this size).
     */
    @Test
    void concurrentEnqueuesCommittingAloneNeverQueueMoreThanTheCap() throws Exception {
        cap(A, 2);
        int threads = 16;
        int each = 20;
        try (ExecutorService pool = Executors.newFixedThreadPool(threads)) {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                done.add(pool.submit(() -> {
                    for (int i = 0; i < each; i++) new PostgresJobStore(db.dataSource()).enqueue(NewJob.of(A, Q, TASK, "{}"));
                }));
            }
            for (Future<?> f : done) f.get(60, TimeUnit.SECONDS);
        }
        assertThat(count("tenant = 'a' AND state = 'queued'")).as("queued, at most the cap").isEqualTo(2);
        assertThat(count("tenant = 'a' AND state = 'held'")).isEqualTo(threads * each - 2);
    }

    /**
     * A job held at the cap wakes no worker: nothing became claimable (the release notifies for what it
     * releases). The enqueue that is queued notifies as always; the first enqueue shows the listener hears.
     */
    @Test
    void aJobHeldAtTheCapWakesNoWorker() throws Exception {
        cap(A, 1);
        try (Connection listener = db.newConnection()) {
            try (var st = listener.createStatement()) {
                st.execute("LISTEN " + Enqueuer.CHANNEL);
            }
            PGConnection pg = listener.unwrap(PGConnection.class);
            assertThat(store.enqueue(NewJob.of(A, Q, TASK, "{}")).job().state()).isEqualTo(JobState.QUEUED);
            PGNotification[] first = pg.getNotifications(2_000);
            assertThat(first).as("the queued job's notification").isNotEmpty();

            assertThat(store.enqueue(NewJob.of(A, Q, TASK, "{}")).job().state()).isEqualTo(JobState.HELD);
            assertThat(store.enqueueBatch(new NewJobBatch(A, Q, TASK, List.of("{}", "{}"), 5, Duration.ZERO))).hasSize(2);
            PGNotification[] afterHeld = pg.getNotifications(500);
            assertThat(afterHeld == null ? 0 : afterHeld.length).as("notifications for held jobs").isZero();
        }
    }

    /** A job gone before the re-read (run, finished, deleted by retention) is answered as inserted, never as null. */
    @Test
    void aJobGoneBeforeTheReReadIsAnsweredAsInserted() {
        cap(A, 1);
        DataSource deleting = JdbcProxies.afterEachCall(DataSource.class, db.dataSource(), (method, args, result) -> {
            // The release's transaction has committed when the re-read takes its connection: delete the job then.
            if (method.getName().equals("getConnection") && counting.transactions.get() == 1) db.execute("DELETE FROM jobs");
            return result;
        });
        PostgresJobStore store = new PostgresJobStore(counting.wrap(deleting));
        EnqueueResult result = store.enqueue(NewJob.of(A, Q, TASK, "{}"));
        assertThat(result.job()).isNotNull();
        assertThat(result.job().tenant()).isEqualTo(A);
        assertThat(count("true")).as("deleted before the re-read").isZero();
    }

    /**
     * The statement has committed the job held when beginning the release fails: the enqueue must still answer
     * Created (a caller told it failed would enqueue again, a duplicate), and the sweep releases the job.
     */
    @Test
    void aFailedReleaseLeavesTheJobHeldForTheSweepAndTheEnqueueSucceeds() {
        cap(A, 1);
        counting.failBegin.set(true);
        EnqueueResult result = counted.enqueue(NewJob.of(A, Q, TASK, "{}"));

        assertThat(result).isInstanceOf(EnqueueResult.Created.class);
        assertThat(result.job().state()).isEqualTo(JobState.HELD);
        assertThat(stateInTable(result.job())).isEqualTo("held");
        store.promoteDue(100); // maintenance: promotion, then the sweep of held jobs
        assertThat(stateInTable(result.job())).as("released by the sweep").isEqualTo("queued");
    }
}
