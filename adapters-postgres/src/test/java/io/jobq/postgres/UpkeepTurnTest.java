package io.jobq.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.jobq.application.port.JobStore;
import io.jobq.application.worker.HandlerRegistry;
import io.jobq.application.worker.Worker;
import io.jobq.application.worker.WorkerListener;
import io.jobq.application.worker.WorkerSettings;
import io.jobq.domain.lease.WorkerId;
import io.jobq.postgres.testing.ForwardingJobStore;
import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Workers take turns at the queue's upkeep ({@link JobStore#takeUpkeepTurn}, schema V12): one turn per gap
 * whoever asks, exactly one winner among workers asking at once, and no row (missing, or dated in the
 * future) that stops upkeep. Four workers then make about one maintenance pass a period between them; the
 * same four with every turn granted (the old behaviour, the wrong variant here) make four, so the bound can fail.
 */
@ExtendWith(PostgresDatabaseExtension.class)
class UpkeepTurnTest {
    static final Duration MINUTE = Duration.ofMinutes(1);

    TestDatabase db;
    PostgresJobStore store;

    @BeforeEach
    void setUp(TestDatabase db) {
        this.db = db;
        db.emptyTables();
        store = new PostgresJobStore(db.dataSource());
    }

    @Test
    void oneTurnPerGapWhoeverAsks() {
        assertThat(store.takeUpkeepTurn(WorkerId.of("w1"), MINUTE)).as("first turn, no row yet").isTrue();
        assertThat(store.takeUpkeepTurn(WorkerId.of("w2"), MINUTE)).as("another worker within the gap").isFalse();
        assertThat(store.takeUpkeepTurn(WorkerId.of("w1"), MINUTE)).as("the same worker within the gap").isFalse();
        assertThat(takenBy()).isEqualTo("w1");
        assertThat(store.takeUpkeepTurn(WorkerId.of("w2"), Duration.ZERO)).as("a gap already passed").isTrue();
        assertThat(takenBy()).isEqualTo("w2");
    }

    @Test
    void noRowStopsUpkeep() {
        store.takeUpkeepTurn(WorkerId.of("w1"), MINUTE);
        db.execute("UPDATE upkeep_turn SET taken_at = now() + interval '1 day'");
        assertThat(store.takeUpkeepTurn(WorkerId.of("w2"), MINUTE)).as("a turn dated in the future is taken over").isTrue();
        assertThat(store.takeUpkeepTurn(WorkerId.of("w3"), MINUTE)).as("and then it counts from now").isFalse();
        db.execute("DELETE FROM upkeep_turn");
        assertThat(store.takeUpkeepTurn(WorkerId.of("w3"), MINUTE)).as("a deleted row").isTrue();
        assertThat(db.dsl().fetchCount(db.dsl().selectFrom("upkeep_turn"))).isOne();
    }

    @Test
    void aNegativeGapIsRefused() {
        assertThatThrownBy(() -> store.takeUpkeepTurn(WorkerId.of("w1"), Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("gap");
    }

    @Test
    void exactlyOneOfManyAskingAtOnceGetsTheTurn() throws Exception {
        int askers = 8;
        store.takeUpkeepTurn(WorkerId.of("earlier"), Duration.ZERO);
        db.execute("UPDATE upkeep_turn SET taken_at = now() - interval '1 hour'");
        CyclicBarrier together = new CyclicBarrier(askers);
        try (ExecutorService pool = Executors.newFixedThreadPool(askers)) {
            List<Future<Boolean>> answers = new ArrayList<>();
            for (int i = 0; i < askers; i++) {
                WorkerId id = WorkerId.of("w" + i);
                answers.add(pool.submit(() -> {
                    together.await();
                    return store.takeUpkeepTurn(id, MINUTE);
                }));
            }
            int won = 0;
            for (Future<Boolean> a : answers) won += a.get() ? 1 : 0;
            assertThat(won).as("workers given the turn").isOne();
        }
    }

    @Test
    void fourWorkersMakeAboutOnePassAPeriodBetweenThem() throws Exception {
        int passes = passesOfFourWorkers(s -> s);
        // Each worker wakes every 80-120 ms; a turn is refused within 75 ms of the last: at most one pass per
        // 75 ms (40 in 3 s), and a little slack for the server's clock against the JVM's sleep.
        assertThat(passes).as("passes of four workers in 3 s").isBetween(10, 44);
    }

    @Test
    void withEveryTurnGrantedTheSameFourMakeFourPassesAPeriod() throws Exception {
        int passes = passesOfFourWorkers(s -> new ForwardingJobStore(s) {
            @Override
            public boolean takeUpkeepTurn(WorkerId worker, Duration gap) {
                return true;
            }
        });
        assertThat(passes).as("passes of four workers in 3 s, each maintaining every period").isGreaterThan(44);
    }

    /** Maintenance passes reported by four workers (maintenance every 100 ms) over 3 s. */
    int passesOfFourWorkers(UnaryOperator<JobStore> view) throws InterruptedException {
        AtomicInteger passes = new AtomicInteger();
        WorkerListener counting = new WorkerListener() {
            @Override
            public void maintenance(int reaped, int promoted) {
                passes.incrementAndGet();
            }
        };
        List<Worker> workers = new ArrayList<>();
        try {
            for (int i = 0; i < 4; i++) {
                WorkerSettings settings = WorkerSettings.builder().workerId(WorkerId.of("w" + i)).listen(false)
                        .maintenanceInterval(Duration.ofMillis(100)).build();
                workers.add(Worker.builder(view.apply(store), HandlerRegistry.withBuiltIns()).settings(settings)
                        .listener(counting).build());
            }
            workers.forEach(Worker::start);
            Thread.sleep(3_000);
            return passes.get();
        } finally {
            workers.forEach(Worker::close);
        }
    }

    String takenBy() {
        return db.dsl().resultQuery("SELECT taken_by FROM upkeep_turn").fetchSingle(0, String.class);
    }
}
