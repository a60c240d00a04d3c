package io.jobq.bootstrap.robustness;

import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.application.port.NewJob;
import io.jobq.application.port.RetryResult;
import io.jobq.bootstrap.robustness.Jobs.Row;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.tenant.TenantId;
import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Robustness case R09: crash on the last allowed attempt: max_attempts = 1, sleep 10 s, SIGKILL after the claim. */
@ExtendWith(PostgresDatabaseExtension.class)
class CrashOnLastAttemptEndsDeadIT {

    @Test
    void theJobIsDeadWithinLeasePlusOneMaintenancePeriodAndRetryRunsItAgain(TestDatabase db) {
        Jobs jobs = new Jobs(db);
        // A's lease is 8 s, so the five other jobs have seconds to run on B before J is reaped, even when
        // B is slow to come back from SIGSTOP on a loaded machine. The sleep (10 s) still outlasts it.
        try (JobqProcess a = ShortSettings.worker(getClass(), db, "r09-A", "10s", "--lease", "8s");
             JobqProcess b = ShortSettings.worker(getClass(), db, "r09-B", "10s")) {
            b.signal("STOP"); // so that A claims J
            long j = jobs.enqueue(NewJob.of(new TenantId("t1"), new QueueName("default"), TaskName.of("sleep"),
                    "{\"ms\": 10000}").withMaxAttempts(1));
            jobs.await(j, Duration.ofSeconds(30), "running", r -> r.state().equals("running"));
            b.signal("CONT");
            a.kill();
            Row orphan = jobs.row(j);
            assertThat(orphan.lockedBy()).isEqualTo("r09-A");
            Instant leaseEnd = orphan.lockedUntil();

            // Meanwhile other jobs of the same tenant and queue run normally (on B).
            List<Long> others = new ArrayList<>();
            for (int i = 0; i < 5; i++) others.add(jobs.enqueue("noop", "{}"));
            for (long o : others) {
                Row r = jobs.await(o, Duration.ofSeconds(10), "done", x -> x.state().equals("done"));
                // Normally: well inside A's 8 s lease, so not held up behind J.
                assertThat(Duration.between(r.createdAt(), r.finishedAt())).isLessThan(Duration.ofSeconds(5));
            }

            Row dead = jobs.await(j, Duration.ofSeconds(20), "dead", r -> !r.state().equals("running"));
            assertThat(dead.state()).isEqualTo("dead");
            assertThat(dead.attempts()).isEqualTo(1);
            assertThat(dead.lastError()).contains("lease expired").contains("r09-A").contains("attempt 1 of 1");
            // Within lease + one maintenance period (0.5 s, ±20 % jitter), plus slack for a busy machine.
            assertThat(dead.finishedAt()).isAfterOrEqualTo(leaseEnd).isBefore(leaseEnd.plusMillis(600 + 900));
            assertThat(others.stream().map(jobs::row).allMatch(r -> r.finishedAt().isBefore(dead.finishedAt())))
                    .as("the other jobs ran while J was stuck").isTrue();

            // Retry runs it again.
            assertThat(jobs.store().retryDead(new JobId(j))).isInstanceOf(RetryResult.Requeued.class);
            Row rerun = jobs.await(j, Duration.ofSeconds(10), "running again", r -> r.attempts() == 2);
            assertThat(rerun.state()).isIn("running", "done");
            assertThat(rerun.lockedBy()).isIn("r09-B", null);
            Row done = jobs.await(j, Duration.ofSeconds(30), "done", r -> r.state().equals("done"));
            assertThat(done.attempts()).isEqualTo(2);
            assertThat(WorkerLog.awaitDones(b, j)).singleElement().asString().contains("attempt 2/2");
        }
    }
}
