package io.jobq.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.application.port.ApiKeyStore.ApiKey;
import io.jobq.application.port.NewJob;
import io.jobq.application.port.Schedule;
import io.jobq.application.port.ScheduleDefinition;
import io.jobq.application.port.WorkerInfo;
import io.jobq.application.schedule.CronSchedule;
import io.jobq.application.worker.HandlerRegistry;
import io.jobq.application.worker.Worker;
import io.jobq.application.worker.WorkerListener;
import io.jobq.application.worker.WorkerSettings;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.lease.WorkerId;
import io.jobq.domain.schedule.ScheduleName;
import io.jobq.domain.tenant.TenantId;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * {@code infinity} and {@code -infinity}, which PostgreSQL takes in any timestamptz, written by hand into
 * the tables beside the jobs (schedules, API keys, workers): each read shows the row, with
 * {@link OffsetDateTime#MAX} or {@link OffsetDateTime#MIN} as the instant, where jOOQ's own parse threw and
 * failed the whole read (every schedule, key or worker with it). A schedule whose last tick is
 * {@code infinity} waits for it, that is never fires, quietly, and holds back no other schedule.
 */
class InfiniteTimestampsBesideJobsTest extends PostgresStoreTestCase {
    private static final NewJob JOB = NewJob.of(TenantId.DEFAULT, QueueName.DEFAULT, TaskName.of("noop"), "{}");

    private void put(String name) {
        store.putSchedule(new ScheduleDefinition(ScheduleName.of(name), CronSchedule.parse("* * * * * *", ZoneOffset.UTC), JOB));
    }

    @Test
    void schedulesAreListedAndReadWithTheirInfiniteTimestamps() {
        put("odd");
        put("plain");
        db.execute("UPDATE schedules SET created_at = '-infinity', updated_at = 'infinity', last_tick = 'infinity' WHERE name = 'odd'");

        assertThat(store.schedules("", 50).schedules()).extracting(s -> s.name().value()).containsExactly("odd", "plain");
        Schedule odd = store.schedule(ScheduleName.of("odd")).orElseThrow();
        assertThat(odd.createdAt()).isEqualTo(OffsetDateTime.MIN.toInstant());
        assertThat(odd.updatedAt()).isEqualTo(OffsetDateTime.MAX.toInstant());
        assertThat(odd.lastTick()).contains(OffsetDateTime.MAX.toInstant());
    }

    @Test
    void aScheduleWaitingForAnInfiniteTickHoldsBackNoOther() throws Exception {
        put("odd");
        put("plain");
        db.execute("UPDATE schedules SET last_tick = 'infinity' WHERE name = 'odd'");

        List<RuntimeException> errors = new CopyOnWriteArrayList<>();
        Worker worker = Worker.builder(store, HandlerRegistry.withBuiltIns())
                .settings(WorkerSettings.builder().concurrency(2).pollInterval(Duration.ofMillis(50)).listen(false).build())
                .listener(new WorkerListener() {
                    @Override
                    public void maintenanceError(RuntimeException e) {
                        errors.add(e);
                    }
                })
                .build();
        try {
            worker.start();
            Thread.sleep(3_500);
        } finally {
            worker.close();
        }
        assertThat(ticks("plain")).as("about one tick a second for 3.5 s").isBetween(2L, 5L);
        assertThat(ticks("odd")).isZero();
        assertThat(errors).as("waiting is not an error, reported every pass").isEmpty();
    }

    private long ticks(String schedule) {
        return db.dsl().resultQuery("SELECT count(*) FROM schedule_ticks WHERE schedule = ?", schedule).fetchSingle(0, Long.class);
    }

    @Test
    void apiKeysAreReadAndListedWithAnInfiniteCreationTime() {
        TenantId tenant = TenantId.of("acme");
        store.saveApiKey(new ApiKey("odd", tenant, new byte[32], Instant.EPOCH));
        store.saveApiKey(new ApiKey("plain", tenant, new byte[32], Instant.EPOCH));
        db.execute("UPDATE api_keys SET created_at = 'infinity' WHERE id = 'odd'");

        assertThat(store.apiKey("odd").orElseThrow().createdAt()).isEqualTo(OffsetDateTime.MAX.toInstant());
        assertThat(store.apiKeys(tenant)).extracting(ApiKey::id).containsExactlyInAnyOrder("odd", "plain");
    }

    @Test
    void liveWorkersShowOneWithInfiniteTimes() {
        store.workerAlive(new WorkerId("odd"), List.of(QueueName.DEFAULT), List.of(), Duration.ofSeconds(1));
        store.workerAlive(new WorkerId("plain"), List.of(QueueName.DEFAULT), List.of(), Duration.ofSeconds(1));
        db.execute("UPDATE workers SET started_at = '-infinity', last_seen = 'infinity' WHERE id = 'odd'");

        List<WorkerInfo> live = store.liveWorkers();
        assertThat(live).extracting(w -> w.id().value()).containsExactly("odd", "plain");
        assertThat(live.getFirst().startedAt()).isEqualTo(OffsetDateTime.MIN.toInstant());
        assertThat(live.getFirst().lastSeen()).isEqualTo(OffsetDateTime.MAX.toInstant());
    }
}
