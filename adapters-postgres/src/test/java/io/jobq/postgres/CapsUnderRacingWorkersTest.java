package io.jobq.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.application.fake.Await;
import io.jobq.application.port.JobStore;
import io.jobq.application.port.NewJobBatch;
import io.jobq.application.port.StoreUnavailableException;
import io.jobq.application.port.TenantSettings;
import io.jobq.application.port.TenantUpdate;
import io.jobq.application.worker.HandlerRegistry;
import io.jobq.application.worker.Worker;
import io.jobq.application.worker.WorkerSettings;
import io.jobq.domain.fairness.MaxRunning;
import io.jobq.domain.fairness.TenantWeight;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.lease.WorkerId;
import io.jobq.domain.retry.BackoffPolicy;
import io.jobq.domain.retry.RetryPolicy;
import io.jobq.domain.tenant.TenantId;
import io.jobq.postgres.testing.ForwardingJobStore;
import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A tenant's cap holds under 8 racing workers with 2-second leases, three of which are cut off from the
 * database mid-run (their runs' leases lapse and are reaped, their late writes refused): a watcher reading
 * the table as fast as it can never sees more than the cap of the tenant's jobs running, every job ends
 * done, and the cap was reached (so the test had something to catch). The same scenario with the cap
 * never applied (the check removed) must exceed it: the watcher can fail.
 */
@ExtendWith(PostgresDatabaseExtension.class)
class CapsUnderRacingWorkersTest {
    static final QueueName Q = QueueName.DEFAULT;
    static final TenantId CAPPED = TenantId.of("capped");
    static final TenantId FREE = TenantId.of("free");
    static final int CAP = 3;
    static final int JOBS = 80;
    static final WorkerSettings RACING = WorkerSettings.builder()
            .concurrency(4).claimBatchSize(4).listen(false).pollInterval(Duration.ofMillis(10))
            .lease(Duration.ofSeconds(2)).maintenanceInterval(Duration.ofMillis(100)).gracePeriod(Duration.ofSeconds(5))
            .build();
    static final RetryPolicy QUICK = new RetryPolicy(BackoffPolicy.of(Duration.ofMillis(1), Duration.ofMillis(50)));

    /** A worker's own view of the store, which a test can cut off as if the process had died. */
    static final class Severable extends ForwardingJobStore {
        final AtomicBoolean cut = new AtomicBoolean();

        Severable(JobStore real) {
            super(real);
        }

        @Override
        protected JobStore delegate() {
            if (cut.get()) throw new StoreUnavailableException("store", new IOException("this worker was killed"));
            return super.delegate();
        }
    }

    TestDatabase db;
    PostgresJobStore store;
    final List<Worker> workers = new ArrayList<>();

    @BeforeEach
    void setUp(TestDatabase db) {
        this.db = db;
        store = PostgresStoreTestCase.emptied(db);
    }

    @AfterEach
    void tearDown() {
        workers.forEach(Worker::close);
    }

    @Test
    void aCappedTenantNeverRunsMoreThanItsCapUnderRacingWorkersAndKills() throws Exception {
        long most = mostRunningSeen(store.configureTenant(TenantUpdate.cap(CAPPED, Q, Optional.of(MaxRunning.of(CAP)))));
        assertThat(most).as("the cap was reached, so exceeding it could be seen").isEqualTo(CAP);
    }

    @Test
    void withoutTheCapTheSameWatcherSeesMoreRunning() throws Exception {
        long most = mostRunningSeen(store.setWeight(CAPPED, Q, TenantWeight.DEFAULT));
        assertThat(most).as("the deliberately wrong variant: no cap applied").isGreaterThan(CAP);
    }

    /** Runs the scenario; returns the most of the capped tenant's jobs the watcher saw running at once. */
    private long mostRunningSeen(TenantSettings settings) throws Exception {
        // 150 ms a capped job: uncapped, 32 slots drain the capped jobs in about 0.4 s, and the three kills below
        // each need a live worker holding one (at 40 ms, a slow CI machine once finished them all before the
        // third kill, and that wait timed out).
        store.enqueueBatch(new NewJobBatch(CAPPED, Q, TaskName.of("sleep"), Collections.nCopies(JOBS, "{\"ms\": 150}"), 10, Duration.ZERO));
        store.enqueueBatch(new NewJobBatch(FREE, Q, TaskName.of("sleep"), Collections.nCopies(JOBS, "{\"ms\": 10}"), 10, Duration.ZERO));
        AtomicInteger most = new AtomicInteger();
        AtomicBoolean watching = new AtomicBoolean(true);
        Thread watcher = Thread.ofPlatform().start(() -> {
            while (watching.get()) {
                int running = db.dsl().fetchCount(db.dsl().selectFrom("jobs").where("tenant = 'capped' AND state = 'running'"));
                most.accumulateAndGet(running, Math::max);
            }
        });
        List<Severable> views = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            Severable view = new Severable(store);
            views.add(view);
            WorkerSettings named = RACING.toBuilder().workerId(WorkerId.of("w" + i)).build();
            Worker w = Worker.builder(view, HandlerRegistry.withBuiltIns()).settings(named).retryPolicy(QUICK).build();
            workers.add(w);
            w.start();
        }
        // Kill three workers, one after another, each while it holds a run of the capped tenant.
        for (int k = 0; k < 3; k++) {
            String[] holder = new String[1];
            Await.until(Duration.ofSeconds(30), "a worker still alive holding a capped run", () -> {
                String[] alive = IntStream.range(0, views.size()).filter(i -> !views.get(i).cut.get())
                        .mapToObj(i -> "w" + i).toArray(String[]::new);
                holder[0] = db.dsl().resultQuery("SELECT min(locked_by) FROM jobs WHERE tenant = 'capped' AND state = 'running'"
                        + " AND locked_by = ANY({0})", (Object) alive).fetchSingle(0, String.class);
                return holder[0] != null;
            });
            views.get(Integer.parseInt(holder[0].substring(1))).cut.set(true);
        }
        Await.until(Duration.ofSeconds(90), "every job done", () -> db.dsl().fetchCount(db.dsl().selectFrom("jobs")
                .where("state <> 'done'")) == 0);
        watching.set(false);
        watcher.join();
        assertThat(settings.tenant()).isEqualTo(CAPPED);
        assertThat(db.dsl().fetchCount(db.dsl().selectFrom("jobs").where("attempts > 1")))
                .as("runs of the killed workers were reaped and ran again").isPositive();
        return most.get();
    }
}
