package io.jobq.bootstrap.robustness;

import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.application.fake.Await;
import io.jobq.bootstrap.robustness.Jobs.Row;
import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Robustness case R02: a frozen worker comes back. Short settings, workers A and B; K = sleep 7 s claimed by A;
 * SIGSTOP A at t = 1 s, SIGCONT A at t = 6 s.
 */
@ExtendWith(PostgresDatabaseExtension.class)
class FrozenWorkerComesBackIT {

    @Test
    void theOtherWorkerReclaimsAndTheThawedWorkerDiscardsItsStaleRun(TestDatabase db) {
        Jobs jobs = new Jobs(db);
        try (JobqProcess a = ShortSettings.worker(getClass(), db, "r02-A", "10s");
             JobqProcess b = ShortSettings.worker(getClass(), db, "r02-B", "10s")) {
            b.signal("STOP"); // so that A, not B, claims K
            long k = jobs.enqueue("sleep", "{\"ms\": 7000}");
            Row claimed = jobs.await(k, Duration.ofSeconds(30), "running", r -> r.state().equals("running"));
            b.signal("CONT");
            assertThat(claimed.lockedBy()).isEqualTo("r02-A");
            Instant t0 = claimed.startedAt();

            awaitT(jobs, t0, 1000);
            a.signal("STOP");

            // B reclaims K once A's lease lapses: attempt 2, and last_error names the expired lease.
            Row reclaimed = jobs.await(k, Duration.ofSeconds(30), "re-claimed by B",
                    r -> r.attempts() >= 2 && !r.state().equals("scheduled") && !r.state().equals("queued"));
            assertThat(reclaimed.state()).isEqualTo("running");
            assertThat(reclaimed.lockedBy()).isEqualTo("r02-B");
            assertThat(reclaimed.lastError()).contains("lease expired").contains("r02-A").contains("attempt 1 of 5");

            awaitT(jobs, t0, 6000);
            a.signal("CONT");

            // A's heartbeat or completion for attempt 1 is not applied, and A discards its run. Usually the
            // overdue heartbeat runs first on thawing ("lost its lease"); when SIGCONT lands late on a busy
            // machine the 7 s sleep may end first, and then the store refuses the completion instead.
            a.awaitLine(Duration.ofSeconds(15), "job " + k + " attempt 1: outcome discarded");
            assertThat(a.lines("job " + k + " attempt 1 lost its lease").size()
                    + a.lines("job " + k + " attempt 1: outcome discarded, the store refused its completion").size())
                    .as("A learned from the store that attempt 1 was no longer its own:%n%s", WorkerLog.mentions(a, k))
                    .isGreaterThanOrEqualTo(1);
            Row done = jobs.await(k, Duration.ofSeconds(30), "done", r -> !r.state().equals("running"));
            assertThat(done.state()).isEqualTo("done");
            assertThat(done.attempts()).isEqualTo(2);
            assertThat(done.result()).isEqualTo("{\"slept_ms\": 7000}");
            assertThat(done.lastError()).contains("lease expired");
            // Recorded by B only.
            assertThat(WorkerLog.awaitDones(b, k)).singleElement().asString().contains("attempt 2/5");
            assertThat(WorkerLog.dones(a, k)).isEmpty();
            assertThat(WorkerLog.discards(a, k)).singleElement().asString().contains("attempt 1:");
            assertThat(WorkerLog.starts(a, k)).singleElement().asString().contains("attempt 1/5");
            assertThat(WorkerLog.starts(b, k)).singleElement().asString().contains("attempt 2/5");

            // A keeps serving after it thawed.
            b.signal("STOP");
            long after = jobs.enqueue("noop", "{}");
            try {
                assertThat(jobs.await(after, Duration.ofSeconds(10), "done", r -> r.state().equals("done")).attempts())
                        .isEqualTo(1);
            } finally {
                b.signal("CONT");
            }
            assertThat(WorkerLog.awaitDones(a, after)).hasSize(1);
        }
    }

    /** Waits until {@code ms} milliseconds after {@code t0} by the database clock. */
    static void awaitT(Jobs jobs, Instant t0, long ms) {
        Await.condition(Duration.ofSeconds(30), "t = " + ms + " ms",
                () -> Duration.between(t0, jobs.dbNow()).toMillis() >= ms);
    }
}
