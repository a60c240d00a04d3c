package io.jobq.bootstrap.robustness;

import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.application.fake.Await;
import io.jobq.bootstrap.robustness.Jobs.Row;
import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Robustness case R01: heartbeats must outlive graceful shutdown. Workers A and B (real processes, short settings);
 * J = sleep 6 s claimed by A; SIGTERM A at t = 1 s.
 */
@ExtendWith(PostgresDatabaseExtension.class)
class HeartbeatsOutliveShutdownIT {
    private static TestDatabase db;
    private static Jobs jobs;

    @BeforeAll
    static void database(TestDatabase database) {
        db = database;
        jobs = new Jobs(db);
    }

    /** Starts A and B, and has A (only) claim J: B is frozen while J is enqueued and claimed. */
    private static long claimOnA(JobqProcess a, JobqProcess b, String aId) {
        b.signal("STOP");
        long j = jobs.enqueue("sleep", "{\"ms\": 6000}");
        jobs.await(j, Duration.ofSeconds(30), "running on A", r -> r.state().equals("running"));
        b.signal("CONT");
        assertThat(jobs.row(j).lockedBy()).isEqualTo(aId);
        return j;
    }

    /** {@link #claimOnA}, then SIGTERM to A at t = 1 s after J's claim by the database clock; returns J. */
    private static long claimOnAAndTerminateItAt1s(JobqProcess a, JobqProcess b, String aId) {
        long j = claimOnA(a, b, aId);
        Row claimed = jobs.row(j);
        Await.condition(Duration.ofSeconds(10), "t = 1 s after J's claim",
                () -> Duration.between(claimed.startedAt(), jobs.dbNow()).toMillis() >= 1000);
        a.signal("TERM");
        return j;
    }

    @Test
    void withGrace10sTheDrainingWorkerKeepsTheLeaseAndFinishesTheJobOnce() {
        try (JobqProcess a = ShortSettings.worker(getClass(), db, "r01-long-A", "10s");
             JobqProcess b = ShortSettings.worker(getClass(), db, "r01-long-B", "10s")) {
            long j = claimOnAAndTerminateItAt1s(a, b, "r01-long-A");
            a.awaitLine(Duration.ofSeconds(10), "stopping: no more claims");
            Instant leaseAtTerm = jobs.row(j).lockedUntil();

            // A stops claiming: a job enqueued now is run by B.
            long other = jobs.enqueue("noop", "{}");
            jobs.await(other, Duration.ofSeconds(10), "done", r -> r.state().equals("done"));
            assertThat(WorkerLog.starts(b, other)).hasSize(1);
            assertThat(WorkerLog.mentions(a, other)).isEmpty();

            // A keeps extending J's lease past the lease it had at SIGTERM, which never lapses.
            Row extended = jobs.await(j, Duration.ofSeconds(10), "lease extended after SIGTERM",
                    r -> !r.state().equals("running") || r.lockedUntil().isAfter(leaseAtTerm.plusMillis(500)));
            assertThat(extended.state()).isEqualTo("running");
            assertThat(extended.lockedBy()).isEqualTo("r01-long-A");

            Row done = jobs.await(j, Duration.ofSeconds(20), "done", r -> !r.state().equals("running"));
            assertThat(done.state()).isEqualTo("done");
            assertThat(done.attempts()).isEqualTo(1);
            assertThat(done.result()).isEqualTo("{\"slept_ms\": 6000}");
            assertThat(Duration.between(done.startedAt(), done.finishedAt()))
                    .isBetween(Duration.ofSeconds(6), Duration.ofMillis(7500));
            assertThat(done.lastError()).isNull();

            // A exits 0 after J is recorded.
            assertThat(a.awaitExit(Duration.ofSeconds(20))).isZero();
            assertThat(WorkerLog.starts(a, j)).hasSize(1);
            assertThat(WorkerLog.dones(a, j)).hasSize(1);
            String out = a.output();
            assertThat(out.indexOf("job " + j + " done (attempt 1/")).isPositive()
                    .isLessThan(out.indexOf("worker r01-long-A stopped"));
            // B never claims J.
            assertThat(WorkerLog.mentions(b, j)).isEmpty();
        }
    }

    @Test
    void withGrace2sTheJobIsLeftToItsLeaseAndRunsToDoneOnTheOtherWorker() {
        try (JobqProcess a = ShortSettings.worker(getClass(), db, "r01-short-A", "2s");
             JobqProcess b = ShortSettings.worker(getClass(), db, "r01-short-B", "10s")) {
            long j = claimOnAAndTerminateItAt1s(a, b, "r01-short-A");

            // A gives up J when its grace period ends and exits 0 well before J could have finished.
            assertThat(a.awaitExit(Duration.ofSeconds(20))).isZero();
            assertThat(WorkerLog.discards(a, j)).hasSize(1);

            Row done = jobs.await(j, Duration.ofSeconds(40), "done", r -> r.state().equals("done"));
            assertThat(done.attempts()).isEqualTo(2);
            assertThat(done.result()).isEqualTo("{\"slept_ms\": 6000}");
            assertThat(done.lastError()).contains("lease expired").contains("r01-short-A");
            assertThat(WorkerLog.starts(b, j)).singleElement().asString().contains("attempt 2/");
            assertThat(WorkerLog.awaitDones(b, j)).singleElement().asString().contains("attempt 2/");
            // A's run never recorded anything: the only completion is B's.
            assertThat(WorkerLog.starts(a, j)).singleElement().asString().contains("attempt 1/");
            assertThat(WorkerLog.dones(a, j)).isEmpty();
        }
    }
}
