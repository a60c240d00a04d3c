package io.jobq.application.worker;

import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.application.fake.InMemoryJobStore;
import io.jobq.application.fake.ManualClock;
import io.jobq.application.port.JobQuery;
import io.jobq.application.port.NewJob;
import io.jobq.application.port.ScheduleDefinition;
import io.jobq.application.schedule.CronSchedule;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.lease.WorkerId;
import io.jobq.domain.schedule.ScheduleName;
import io.jobq.domain.tenant.TenantId;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The firing role over the in-memory store and a manual clock: pauses, missed ticks, several firers, re-created schedules. */
class ScheduleFirerTest {
    private static final ScheduleName NAME = ScheduleName.of("report");

    private final ManualClock clock = new ManualClock(Instant.parse("2026-12-01T00:00:00Z"));
    private final InMemoryJobStore store = new InMemoryJobStore(clock);

    private ScheduleFirer firer() {
        return firer(WorkerListener.NONE);
    }

    private ScheduleFirer firer(WorkerListener listener) {
        WorkerId id = WorkerId.of("w");
        return new ScheduleFirer(store, id, new WakeSignal(), new ErrorReporter(id, listener, FatalErrorPolicy.HALT),
                new StopLatch(), OutageBackoff.of(WorkerSettings.DEFAULTS));
    }

    private void put(String cron, String task) {
        store.putSchedule(new ScheduleDefinition(NAME, CronSchedule.parse(cron, ZoneOffset.UTC),
                NewJob.of(TenantId.DEFAULT, QueueName.DEFAULT, TaskName.of(task), "{}")));
    }

    private long jobs() {
        return store.list(JobQuery.firstPage()).size();
    }

    @Test
    void firesEachDueTickOnceWhateverTheNumberOfFirersAndPausesUntilTheNextTick() {
        put("* * * * *", "t");
        ScheduleFirer a = firer();
        ScheduleFirer b = firer();
        clock.advance(Duration.ofSeconds(30));
        assertThat(a.pass()).as("nothing due; back within the longest pause").isEqualTo(ScheduleFirer.MAX_PAUSE);
        assertThat(jobs()).isZero();

        clock.advance(Duration.ofSeconds(30)); // 00:01:00
        a.pass();
        b.pass();
        assertThat(jobs()).as("one tick, two firers").isEqualTo(1);
        clock.advance(Duration.ofMillis(59_500));
        assertThat(a.pass()).as("half a second to the next tick").isEqualTo(Duration.ofMillis(502));
    }

    /** Read a page at a time: a pass that read only its first page would leave the schedules after it unfired. */
    @Test
    void everyScheduleFiresWhenTheyFillMoreThanOnePage() {
        int n = 2 * ScheduleFirer.PAGE + 3;
        for (int i = 0; i < n; i++) {
            store.putSchedule(new ScheduleDefinition(ScheduleName.of("s-" + i), CronSchedule.parse("* * * * *", ZoneOffset.UTC),
                    NewJob.of(TenantId.DEFAULT, QueueName.DEFAULT, TaskName.of("t"), "{}")));
        }
        clock.advance(Duration.ofMinutes(1));
        firer().pass();
        assertThat(store.countsByQueueAndState().get(QueueName.DEFAULT).values().stream().mapToLong(Long::longValue).sum())
                .as("one job per schedule").isEqualTo(n);
        assertThat(store.calls("scheduleTimings")).as("pages read").isEqualTo(3);
        assertThat(store.calls("schedules")).as("payloads read").isZero();
    }

    /** A schedule whose job the store refuses (a row written by hand) is reported once per revision, not every pass. */
    @Test
    void aScheduleWhoseJobIsRefusedIsReportedOncePerRevision() {
        put("* * * * *", "t");
        List<RuntimeException> reported = new ArrayList<>();
        ScheduleFirer a = firer(new WorkerListener() {
            @Override
            public void maintenanceError(RuntimeException e) {
                reported.add(e);
            }
        });
        clock.advance(Duration.ofMinutes(1));
        for (int pass = 0; pass < 3; pass++) {
            store.throwOnNextCall("fireSchedule", new IllegalArgumentException("payload prints to more than 1 MiB"));
            a.pass();
        }
        assertThat(reported).as("reported once over three passes").hasSize(1);
        assertThat(reported.getFirst()).hasMessage("payload prints to more than 1 MiB");
        assertThat(jobs()).isZero();

        put("* * * * *", "t"); // a new revision: reported again if refused again
        clock.advance(Duration.ofMinutes(1));
        store.throwOnNextCall("fireSchedule", new IllegalArgumentException("still refused"));
        a.pass();
        assertThat(reported).hasSize(2);
    }

    @Test
    void afterAnOutageOneJobNotOnePerMissedTick() {
        put("* * * * *", "t");
        ScheduleFirer a = firer();
        clock.advance(Duration.ofMinutes(1));
        a.pass();
        clock.advance(Duration.ofMinutes(10).plusSeconds(5));
        a.pass();
        a.pass();
        assertThat(jobs()).isEqualTo(2);
    }

    @Test
    void aScheduleDeletedAndCreatedAgainFiresItsNewCronOnly() {
        put("* * * * *", "old");
        ScheduleFirer a = firer();
        a.pass(); // knows the old expression
        store.deleteSchedule(NAME);
        put("0 3 * * *", "new");
        clock.advance(Duration.ofMinutes(5));
        a.pass();
        assertThat(jobs()).as("nothing until 03:00").isZero();
        assertThat(store.schedule(NAME).orElseThrow().lastTick()).isEmpty();
    }
}
