package io.jobq.application.port;

import static io.jobq.application.port.JobStoreContract.OTHER;
import static io.jobq.application.port.JobStoreContract.TASK;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.jobq.application.schedule.CronSchedule;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.JobState;
import io.jobq.domain.schedule.ScheduleName;
import io.jobq.domain.tenant.TenantId;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * Cron schedules in the store ({@link ScheduleStore}) on every store: definitions by revision, and firing
 * a tick at most once, forward only. Which tick is due is {@link CronSchedule}'s decision and tested there;
 * here ticks are chosen by hand, a little after the schedule's last change.
 */
public abstract class SchedulesContract {
    private static final ScheduleName NIGHTLY = ScheduleName.of("nightly-report");
    private static final TenantId ACME = TenantId.of("acme");

    /** The store under test, empty at the start of each test. */
    protected abstract JobStore store();

    private static ScheduleDefinition every(String cron, ScheduleName name) {
        NewJob job = NewJob.of(ACME, OTHER, TASK, "{\"report\": \"sales\"}").withMaxAttempts(3);
        return new ScheduleDefinition(name, CronSchedule.parse(cron, ZoneOffset.UTC), job);
    }

    /** A tick {@code seconds} after the schedule's last change, on a whole second. */
    private static Instant tickAfter(Schedule s, int seconds) {
        return s.updatedAt().truncatedTo(ChronoUnit.SECONDS).plusSeconds(seconds);
    }

    @Test
    void aScheduleIsCreatedThenReplacedUnderANewRevision() {
        ScheduleStore.ScheduleWrite created = store().putSchedule(every("0 3 * * *", NIGHTLY));
        assertThat(created.created()).isTrue();
        assertThat(created.schedule().revision()).isPositive();
        assertThat(created.schedule().cron()).isEqualTo("0 3 * * *");
        assertThat(created.schedule().timezone()).isEqualTo("Z");
        assertThat(created.schedule().lastTick()).isEmpty();

        ScheduleStore.ScheduleWrite replaced = store().putSchedule(every("*/5 * * * * *", NIGHTLY));
        assertThat(replaced.created()).isFalse();
        assertThat(replaced.schedule().revision()).isGreaterThan(created.schedule().revision());
        assertThat(replaced.schedule().createdAt()).isEqualTo(created.schedule().createdAt());
        assertThat(replaced.schedule().updatedAt()).isAfterOrEqualTo(created.schedule().updatedAt());
        assertThat(store().schedule(NIGHTLY)).contains(replaced.schedule());

        store().putSchedule(every("0 3 * * *", ScheduleName.of("a-first")));
        assertThat(store().schedules("", 50).schedules()).extracting(s -> s.name().value()).containsExactly("a-first", "nightly-report");
    }

    @Test
    void schedulesComeInNamePagesThatEndAtTheLimitOrTheCharacterBudget() {
        for (String name : List.of("c", "a", "b")) store().putSchedule(every("0 3 * * *", ScheduleName.of(name)));
        ScheduleStore.SchedulePage first = store().schedules("", 2);
        assertThat(first.schedules()).extracting(s -> s.name().value()).containsExactly("a", "b");
        assertThat(first.next()).contains("b");
        ScheduleStore.SchedulePage last = store().schedules("b", 2);
        assertThat(last.schedules()).extracting(s -> s.name().value()).containsExactly("c");
        assertThat(last.next()).isEmpty();
        assertThatThrownBy(() -> store().schedules("", 0)).isInstanceOf(IllegalArgumentException.class);

        // five payloads of ~1 MB: four fit in LIST_PAGE_CHARS, the fifth starts the next page
        String big = "{\"s\":\"" + "a".repeat(999_000) + "\"}";
        for (String name : List.of("d1", "d2", "d3", "d4", "d5")) {
            store().putSchedule(new ScheduleDefinition(ScheduleName.of(name), CronSchedule.parse("0 3 * * *", ZoneOffset.UTC),
                    NewJob.of(ACME, OTHER, TASK, big)));
        }
        ScheduleStore.SchedulePage cut = store().schedules("c", 10);
        assertThat(cut.schedules()).extracting(s -> s.name().value()).containsExactly("d1", "d2", "d3", "d4");
        assertThat(cut.next()).contains("d4");
        assertThat(store().schedules("d4", 10).schedules()).extracting(s -> s.name().value()).containsExactly("d5");
        assertThat(store().schedules("d4", 10).next()).isEmpty();
    }

    @Test
    void timingsComeInNamePagesWithoutThePayloads() {
        for (String name : List.of("c", "a", "e", "b", "d")) store().putSchedule(every("0 3 * * *", ScheduleName.of(name)));
        ScheduleStore.ScheduleTimings first = store().scheduleTimings("", 2);
        assertThat(first.timings()).extracting(t -> t.name().value()).containsExactly("a", "b");
        assertThat(first.next()).contains("b");
        ScheduleStore.ScheduleTimings second = store().scheduleTimings(first.next().orElseThrow(), 2);
        assertThat(second.timings()).extracting(t -> t.name().value()).containsExactly("c", "d");
        ScheduleStore.ScheduleTimings last = store().scheduleTimings(second.next().orElseThrow(), 2);
        assertThat(last.timings()).extracting(t -> t.name().value()).containsExactly("e");
        assertThat(last.next()).as("a short page is the last").isEmpty();
        Schedule a = store().schedule(ScheduleName.of("a")).orElseThrow();
        assertThat(first.timings().getFirst()).isEqualTo(a.timing());
        assertThat(store().scheduleTimings("e", 2).timings()).isEmpty();
        assertThatThrownBy(() -> store().scheduleTimings("", 0))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aTickFiresItsJobOnceAndTicksOnlyMoveForward() {
        Schedule s = store().putSchedule(every("* * * * * *", NIGHTLY)).schedule();
        Instant t1 = tickAfter(s, 2);

        Optional<JobId> fired = store().fireSchedule(NIGHTLY, s.revision(), t1);
        assertThat(fired).isPresent();
        Job job = store().get(fired.get()).orElseThrow();
        assertThat(job.state()).isEqualTo(JobState.QUEUED);
        assertThat(job.tenant()).isEqualTo(ACME);
        assertThat(job.queue()).isEqualTo(OTHER);
        assertThat(job.task()).isEqualTo(TASK);
        assertThat(job.maxAttempts()).isEqualTo(3);

        assertThat(store().fireSchedule(NIGHTLY, s.revision(), t1)).as("the same tick again").isEmpty();
        assertThat(store().fireSchedule(NIGHTLY, s.revision(), t1.minusSeconds(1))).as("an earlier tick").isEmpty();
        Optional<JobId> next = store().fireSchedule(NIGHTLY, s.revision(), t1.plusSeconds(1));
        assertThat(next).isPresent().isNotEqualTo(fired);

        Schedule after = store().schedule(NIGHTLY).orElseThrow();
        assertThat(after.lastTick()).contains(t1.plusSeconds(1));
        assertThat(after.lastJob()).isEqualTo(next);
        assertThat(after.since()).isEqualTo(t1.plusSeconds(1));
        assertThat(store().list(JobQuery.firstPage())).hasSize(2);
    }

    @Test
    void aFirerThatReadAnOlderRevisionFiresNothing() {
        Schedule first = store().putSchedule(every("* * * * * *", NIGHTLY)).schedule();
        Schedule second = store().putSchedule(every("*/2 * * * * *", NIGHTLY)).schedule();
        Instant tick = tickAfter(second, 2);
        assertThat(store().fireSchedule(NIGHTLY, first.revision(), tick)).isEmpty();
        assertThat(store().fireSchedule(NIGHTLY, second.revision(), tick)).isPresent();
    }

    @Test
    void noTickAtOrBeforeTheLastChangeFires() {
        Schedule s = store().putSchedule(every("* * * * * *", NIGHTLY)).schedule();
        assertThat(store().fireSchedule(NIGHTLY, s.revision(), s.updatedAt())).isEmpty();
        assertThat(store().fireSchedule(NIGHTLY, s.revision(), s.updatedAt().minusSeconds(60))).isEmpty();
        assertThat(store().list(JobQuery.firstPage())).isEmpty();
    }

    @Test
    void deletingAScheduleKeepsTheJobsItEnqueued() {
        Schedule s = store().putSchedule(every("* * * * * *", NIGHTLY)).schedule();
        JobId job = store().fireSchedule(NIGHTLY, s.revision(), tickAfter(s, 2)).orElseThrow();

        assertThat(store().deleteSchedule(NIGHTLY)).isTrue();
        assertThat(store().deleteSchedule(NIGHTLY)).isFalse();
        assertThat(store().schedule(NIGHTLY)).isEmpty();
        assertThat(store().fireSchedule(NIGHTLY, s.revision(), tickAfter(s, 3))).as("a deleted schedule").isEmpty();
        assertThat(store().get(job)).isPresent();

        Schedule again = store().putSchedule(every("* * * * * *", NIGHTLY)).schedule();
        assertThat(again.revision()).as("created again: a revision never seen").isGreaterThan(s.revision());
        assertThat(store().fireSchedule(NIGHTLY, s.revision(), tickAfter(again, 2))).as("the deleted one's revision").isEmpty();
    }

    @Test
    void manyFirersOfOneTickEnqueueOneJob() throws Exception {
        Schedule s = store().putSchedule(every("* * * * * *", NIGHTLY)).schedule();
        Instant tick = tickAfter(s, 2);
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Callable<Optional<JobId>>> firers = new ArrayList<>();
            for (int i = 0; i < 8; i++) firers.add(() -> store().fireSchedule(NIGHTLY, s.revision(), tick));
            List<Optional<JobId>> results = new ArrayList<>();
            for (Future<Optional<JobId>> f : pool.invokeAll(firers)) results.add(f.get());
            assertThat(results.stream().filter(Optional::isPresent)).hasSize(1);
        } finally {
            pool.shutdownNow();
        }
        assertThat(store().list(JobQuery.firstPage())).hasSize(1);
    }
}
