package io.jobq.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.jobq.application.port.NewJob;
import io.jobq.application.port.Schedule;
import io.jobq.application.port.ScheduleDefinition;
import io.jobq.application.schedule.CronSchedule;
import io.jobq.application.worker.HandlerRegistry;
import io.jobq.application.worker.Worker;
import io.jobq.application.worker.WorkerSettings;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.schedule.ScheduleName;
import io.jobq.domain.tenant.TenantId;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.jooq.exception.DataAccessException;
import org.junit.jupiter.api.Test;

/**
 * What makes a tick fire once in PostgreSQL: the primary key of {@code schedule_ticks}, even when the
 * forward-only {@code last_tick} guard is taken away; and workers firing schedules for real, a broken
 * hand-edited schedule beside a good one.
 */
class ScheduleTicksTest extends PostgresStoreTestCase {
    private static final ScheduleName EVERY_SECOND = ScheduleName.of("every-second");

    private Schedule putEverySecond() {
        NewJob job = NewJob.of(TenantId.DEFAULT, QueueName.DEFAULT, TaskName.of("noop"), "{}");
        return store.putSchedule(new ScheduleDefinition(EVERY_SECOND, CronSchedule.parse("* * * * * *", ZoneOffset.UTC), job))
                .schedule();
    }

    private long jobs() {
        return db.dsl().resultQuery("SELECT count(*) FROM jobs").fetchSingle(0, Long.class);
    }

    @Test
    void theTicksKeyAloneRefusesATickTwiceAndWithoutItTheTickFiresTwice() {
        Schedule s = putEverySecond();
        Instant tick = s.updatedAt().truncatedTo(ChronoUnit.SECONDS).plusSeconds(2);
        assertThat(store.fireSchedule(EVERY_SECOND, s.revision(), tick)).isPresent();

        // take the forward-only guard away, as a lost update or a hand edit might
        db.execute("UPDATE schedules SET last_tick = NULL");
        assertThat(store.fireSchedule(EVERY_SECOND, s.revision(), tick)).as("refused by schedule_ticks_pkey").isEmpty();
        assertThat(jobs()).isEqualTo(1);

        // the wrong variant: no key on (schedule, tick)
        try {
            db.execute("ALTER TABLE schedule_ticks DROP CONSTRAINT schedule_ticks_pkey");
            db.execute("UPDATE schedules SET last_tick = NULL");
            assertThat(store.fireSchedule(EVERY_SECOND, s.revision(), tick)).as("nothing else stops it").isPresent();
            assertThat(jobs()).isEqualTo(2);
        } finally {
            db.emptyTables();
            db.execute("ALTER TABLE schedule_ticks ADD CONSTRAINT schedule_ticks_pkey PRIMARY KEY (schedule, tick)");
        }
    }

    /**
     * A tenant row held by an application's open transaction (an enqueue through {@link JobClient}) delays
     * that schedule's tick and stalls nothing: the fire gives up after {@link LockWait#MAX_MS} ms and a later one
     * fires. Without the limit (the wrong variant) the same fire waits for the transaction, and with it every
     * schedule after it in the firer's pass.
     */
    @Test
    void aTenantRowHeldByAnOpenTransactionDelaysTheTickAndStallsNothing() throws Exception {
        Schedule s = putEverySecond();
        Instant tick = s.updatedAt().truncatedTo(ChronoUnit.SECONDS).plusSeconds(2);
        java.util.concurrent.Executor virtual = work -> Thread.ofVirtual().start(work);
        try (java.sql.Connection app = db.newConnection()) {
            app.setAutoCommit(false);
            new JobClient().enqueue(app, NewJob.of(TenantId.DEFAULT, QueueName.DEFAULT, TaskName.of("noop"), "{}"));
            var fired = java.util.concurrent.CompletableFuture.supplyAsync(() -> store.fireSchedule(EVERY_SECOND, s.revision(), tick), virtual);
            assertThat(fired.get(5, java.util.concurrent.TimeUnit.SECONDS)).as("not fired while the row is held").isEmpty();

            var unbounded = java.util.concurrent.CompletableFuture.supplyAsync(() -> JobqSchema.DEFAULT.dsl(db.dataSource())
                    .transactionResult(cfg -> ScheduleTable.fire(cfg.dsl(), EVERY_SECOND, s.revision(), tick)), virtual);
            Thread.sleep(1_000); // ten times the limit
            assertThat(unbounded).as("the wrong variant waits for the transaction").isNotDone();
            app.rollback();
            assertThat(unbounded.get(5, java.util.concurrent.TimeUnit.SECONDS)).isPresent();
        }
        assertThat(store.fireSchedule(EVERY_SECOND, s.revision(), tick.plusSeconds(1))).as("a later fire, the row free").isPresent();
    }

    @Test
    void aPutBringsALastTickInTheFutureBackToNow() {
        putEverySecond();
        db.execute("UPDATE schedules SET last_tick = '2100-01-01T00:00:00Z'");
        Schedule again = putEverySecond();
        assertThat(again.lastTick().orElseThrow()).isBeforeOrEqualTo(store.now());
    }

    @Test
    void aHandWrittenScheduleWithABadNameIsRefused() {
        assertThatThrownBy(() -> db.execute("""
                INSERT INTO schedules (name, cron, timezone, tenant, queue, task, payload, max_attempts)
                VALUES ('a b', '* * * * *', 'UTC', 'default', 'default', 'noop', '{}', 5)"""))
                .isInstanceOf(DataAccessException.class).hasMessageContaining("schedules_name_valid");
    }

    /**
     * Rows the domain refuses ("." and "..", which the table's check lets through) are left out of a page of
     * timings but still move it on: a page cursor counted from the readable rows would stop at a page of them,
     * and the schedules after it would never fire.
     */
    @Test
    void unreadableRowsFillingAPageOfTimingsDoNotEndTheListing() {
        for (String name : List.of(".", "..")) {
            db.execute("""
                    INSERT INTO schedules (name, cron, timezone, tenant, queue, task, payload, max_attempts)
                    VALUES ({0}, '* * * * *', 'UTC', 'default', 'default', 'noop', '{}', 5)""", name);
        }
        for (String name : List.of("a", "b")) {
            store.putSchedule(new ScheduleDefinition(ScheduleName.of(name), CronSchedule.parse("* * * * *", ZoneOffset.UTC),
                    NewJob.of(TenantId.DEFAULT, QueueName.DEFAULT, TaskName.of("noop"), "{}")));
        }
        List<String> seen = new ArrayList<>();
        int pages = 0;
        for (Optional<String> after = Optional.of(""); after.isPresent(); pages++) {
            var page = store.scheduleTimings(after.get(), 2);
            page.timings().forEach(t -> seen.add(t.name().value()));
            after = page.next();
        }
        assertThat(seen).containsExactlyInAnyOrder("a", "b");
        assertThat(pages).as("two full pages and an empty one").isEqualTo(3);
    }

    /**
     * A payload the table takes but jobq refuses to read back (numbers printing to more than 1 MiB, under the
     * table's 2 MiB): the firer reads no payloads, so firing is where it shows. It fires nothing and writes
     * nothing, and says why; the firer warns once per revision (ScheduleFirerTest).
     */
    @Test
    void aHandWrittenPayloadTooLargeToReadBackFiresNothing() {
        String payload = "[" + String.join(",", java.util.Collections.nCopies(1_100, "1e999")) + "]";
        db.execute("""
                INSERT INTO schedules (name, cron, timezone, tenant, queue, task, payload, max_attempts, updated_at)
                VALUES ('big', '* * * * *', 'UTC', 'default', 'default', 'noop', {0}::jsonb, 5, now() - interval '1 hour')""",
                payload);
        var timing = store.scheduleTimings("", 10).timings().getFirst();
        Instant tick = Instant.now().truncatedTo(ChronoUnit.MINUTES);

        assertThatThrownBy(() -> store.fireSchedule(timing.name(), timing.revision(), tick))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("payload");
        assertThat(jobs()).isZero();
        assertThat(store.schedule(ScheduleName.of("big"))).as("listed as unreadable: left out").isEmpty();
        assertThat(store.scheduleTimings("", 10).timings().getFirst().lastTick()).as("no tick recorded").isEmpty();
    }

    @Test
    void workersFireEachTickOnceAndABrokenScheduleStopsNoneOfThem() throws Exception {
        putEverySecond();
        NewJob job = NewJob.of(TenantId.DEFAULT, QueueName.DEFAULT, TaskName.of("noop"), "{}");
        store.putSchedule(new ScheduleDefinition(ScheduleName.of("broken"), CronSchedule.parse("* * * * * *", ZoneOffset.UTC), job));
        db.execute("UPDATE schedules SET cron = 'now and then' WHERE name = 'broken'");

        WorkerSettings settings = WorkerSettings.builder().concurrency(2).pollInterval(Duration.ofMillis(50)).listen(false).build();
        List<Worker> workers = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                Worker w = Worker.builder(store, HandlerRegistry.withBuiltIns()).settings(settings).build();
                workers.add(w);
                w.start();
            }
            Thread.sleep(4_500);
        } finally {
            workers.forEach(Worker::close);
        }
        long fired = db.dsl().resultQuery("SELECT count(*) FROM schedule_ticks WHERE schedule = 'every-second'").fetchSingle(0, Long.class);
        assertThat(fired).as("about one tick a second for 4.5 s").isBetween(3L, 6L);
        assertThat(jobs()).as("one job per tick, none for the broken schedule").isEqualTo(fired);
        assertThat(db.dsl().resultQuery("SELECT count(*) FROM jobs WHERE state = 'done'").fetchSingle(0, Long.class))
                .as("the workers ran them").isGreaterThanOrEqualTo(fired - 1);
    }
}
