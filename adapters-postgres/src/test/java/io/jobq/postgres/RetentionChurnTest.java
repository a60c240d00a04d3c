package io.jobq.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.application.port.NewJobBatch;
import io.jobq.application.port.QueueUpdate;
import io.jobq.application.port.Retention;
import io.jobq.application.worker.HandlerRegistry;
import io.jobq.application.worker.Worker;
import io.jobq.application.worker.WorkerSettings;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.tenant.TenantId;
import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A steady load with a 1-second retention keeps the finished rows bounded: a worker's maintenance deletes
 * what it finished. The same churn with done jobs kept for ever (the wrong variant for this property) keeps
 * every job it ran, so the bound is one the test can fail. Finished rows are counted, not all rows: on a
 * loaded machine the worker may fall behind the enqueues, and a growing backlog is not retention's doing.
 */
@ExtendWith(PostgresDatabaseExtension.class)
class RetentionChurnTest {
    static final QueueName Q = QueueName.DEFAULT;
    static final int PER_TICK = 20;
    static final Duration TICK = Duration.ofMillis(100);
    static final int TICKS = 60; // 6 s, 1,200 jobs

    TestDatabase db;
    PostgresJobStore store;

    @BeforeEach
    void setUp(TestDatabase db) {
        this.db = db;
        db.emptyTables();
        store = new PostgresJobStore(db.dataSource());
    }

    /** Churns for {@link #TICKS} ticks and returns the done rows counted at every tick after the first second. */
    List<Long> churn(Duration keepDone) throws InterruptedException {
        store.configureQueue(QueueUpdate.retention(Q, new Retention(keepDone, Duration.ZERO, Duration.ZERO)));
        WorkerSettings settings = WorkerSettings.builder().concurrency(4).maintenanceInterval(Duration.ofMillis(200))
                .pollInterval(Duration.ofMillis(50)).listen(false).build();
        List<Long> rows = new ArrayList<>();
        try (Worker worker = Worker.builder(store, HandlerRegistry.withBuiltIns()).settings(settings).build()) {
            worker.start();
            for (int tick = 0; tick < TICKS; tick++) {
                store.enqueueBatch(new NewJobBatch(TenantId.of("acme"), Q, TaskName.of("noop"), Collections.nCopies(PER_TICK, "{}"),
                        5, Duration.ZERO));
                Thread.sleep(TICK.toMillis());
                if (tick >= 10) rows.add(db.dsl().resultQuery("SELECT count(*) FROM jobs WHERE state = 'done'").fetchSingle(0, Long.class));
            }
        }
        return rows;
    }

    @Test
    void aOneSecondRetentionKeepsTheTableFlatUnderSteadyLoad() throws InterruptedException {
        List<Long> rows = churn(Duration.ofSeconds(1));
        // at most 200 jobs finish a second, kept 1 s, deleted by a pass every 200 ms: about 250-300 done rows
        assertThat(rows).as("done rows after the first second").allMatch(n -> n < 600);
        long firstHalf = rows.subList(0, rows.size() / 2).stream().mapToLong(Long::longValue).max().orElseThrow();
        long secondHalf = rows.subList(rows.size() / 2, rows.size()).stream().mapToLong(Long::longValue).max().orElseThrow();
        assertThat(secondHalf).as("flat, not growing").isLessThan(firstHalf + 200);
    }

    @Test
    void keptForEverTheSameChurnGrowsTheTableWithoutBound() throws InterruptedException {
        List<Long> rows = churn(Duration.ZERO);
        assertThat(rows.getLast()).as("every job done is still there: more than the bound above").isGreaterThan(600);
        assertThat(rows.getLast()).isGreaterThan(rows.getFirst() + 400);
    }
}
