package io.jobq.bootstrap.robustness;

import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.bootstrap.robustness.Jobs.Row;
import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Robustness case R08: leases are extended per run, not per worker name. Worker W claims J and is SIGKILLed; a new
 * process with the same worker id W starts. The first W leases for 10 s (not the short 2 s), so the
 * new W is up and heartbeating while J's orphaned lease is still valid: heartbeats keyed by worker
 * name would keep extending it forever.
 */
@ExtendWith(PostgresDatabaseExtension.class)
class LeasesAreExtendedPerRunNotPerWorkerIdIT {

    @Test
    void theRestartedWorkerDoesNotExtendTheOrphanedRunAndItIsReapedAndRunAgain(TestDatabase db) {
        Jobs jobs = new Jobs(db);
        Instant orphanLease;
        long j;
        // A 25 s lease: the restarted JVM must be up (START_UP allows up to 120 s on a busy machine) before
        // the orphaned lease lapses, and heartbeats come every lease/3, so the lapse is >= 16 s after the kill.
        try (JobqProcess first = ShortSettings.worker(getClass(), db, "r08-W", "10s", "--lease", "25s")) {
            j = jobs.enqueue("sleep", "{\"ms\": 4000}");
            jobs.await(j, Duration.ofSeconds(30), "running", r -> r.state().equals("running"));
            first.kill();
            Row orphan = jobs.row(j);
            assertThat(orphan.state()).isEqualTo("running");
            assertThat(orphan.lockedBy()).isEqualTo("r08-W");
            assertThat(orphan.attempts()).isEqualTo(1);
            orphanLease = orphan.lockedUntil();
        }
        try (JobqProcess second = ShortSettings.workerBuilder(getClass(), db, "r08-W-restarted", "r08-W", "10s").start()) {
            ShortSettings.awaitStarted(second, "r08-W");
            assertThat(jobs.dbNow()).as("the new W must be up before the orphaned lease lapses, or this proves nothing")
                    .isBefore(orphanLease.minusSeconds(1));

            // While attempt 1's lease runs, the new W heartbeats (same worker id) but never extends it.
            Row reaped = jobs.await(j, Duration.ofSeconds(60), "reaped", r -> {
                if (r.state().equals("running") && r.attempts() == 1) {
                    assertThat(r.lockedUntil()).as("attempt 1's lease, extended by a worker that does not hold it")
                            .isEqualTo(orphanLease);
                    return false;
                }
                return true;
            });
            // Reaped within one maintenance period (0.5 s, ±20 %) of its expiry, plus slack for a busy machine.
            assertThat(reaped.dbNow()).isBefore(orphanLease.plusMillis(600 + 1000));
            assertThat(reaped.lastError()).contains("lease expired: worker r08-W did not finish attempt 1");

            Row done = jobs.await(j, Duration.ofSeconds(30), "done", r -> r.state().equals("done"));
            assertThat(done.attempts()).isEqualTo(2);
            assertThat(done.result()).isEqualTo("{\"slept_ms\": 4000}");
            assertThat(WorkerLog.starts(second, j)).singleElement().asString().contains("attempt 2/5");
            assertThat(WorkerLog.awaitDones(second, j)).singleElement().asString().contains("attempt 2/5");
        }
    }
}
