package io.jobq.bootstrap.robustness;

import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.bootstrap.robustness.Jobs.Row;
import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Robustness case R11: the database clock decides. jobq processes run under libfaketime with their wall clock
 * 300 s behind or ahead; the database (and the test) keep real time. Tagged serial (second failsafe
 * execution): skewed processes must not share the machine with timing-sensitive tests.
 */
@Tag("serial")
@ExtendWith(PostgresDatabaseExtension.class)
class DatabaseClockDecidesIT {
    private static TestDatabase db;
    private static Jobs jobs;

    @BeforeAll
    static void database(TestDatabase database) {
        db = database;
        jobs = new Jobs(db);
    }

    @Test
    void apiClock300sBehind() {
        delayedJobFollowsTheDatabaseClock("api-behind", "-300s", -300);
    }

    @Test
    void apiClock300sAhead() {
        delayedJobFollowsTheDatabaseClock("api-ahead", "+300s", 300);
    }

    /** API skewed, worker on real time: enqueue with delay_seconds = 10. */
    private void delayedJobFollowsTheDatabaseClock(String name, String offset, long skewSeconds) {
        int port = JobqProcess.freePort();
        try (JobqProcess api = JobqProcess.builder(getClass(), name, db.jdbcUrl()).fakeTime(offset)
                     .args("api", "--port", Integer.toString(port)).start();
             JobqProcess worker = ShortSettings.worker(getClass(), db, name + "-worker", "10s")) {
            Http http = new Http(port);
            http.awaitHealthy(api, ShortSettings.START_UP);
            // The API's JVM really runs skewed: its HTTP Date header comes from its wall clock.
            Http.Response health = http.get("/health");
            Instant served = java.time.ZonedDateTime.parse(health.date().orElseThrow(),
                    java.time.format.DateTimeFormatter.RFC_1123_DATE_TIME).toInstant();
            assertThat(Duration.between(Instant.now(), served).toSeconds()).as("%s's clock offset", name)
                    .isBetween(skewSeconds - 5, skewSeconds + 5);

            Instant before = jobs.dbNow();
            Http.Response created = http.post("/jobs", "{\"task\": \"noop\", \"delay_seconds\": 10}");
            Instant after = jobs.dbNow();
            assertThat(created.status()).as("%s", created.body()).isEqualTo(201);
            long id = created.body().get("id").asLong();

            // run_at ≈ the database's now() + 10 s
            Row scheduled = jobs.row(id);
            assertThat(scheduled.state()).isEqualTo("scheduled");
            assertThat(scheduled.runAt()).isBetween(before.plusSeconds(10), after.plusSeconds(10));
            assertThat(Duration.between(scheduled.createdAt(), scheduled.runAt())).isEqualTo(Duration.ofSeconds(10));

            // It starts 10 ± 1.5 s later: not at once, not 310 s later.
            Row done = jobs.await(id, Duration.ofSeconds(30), "done", r -> r.state().equals("done"));
            assertThat(Duration.between(done.createdAt(), done.startedAt()))
                    .isBetween(Duration.ofMillis(8500), Duration.ofMillis(11500));
            assertThat(done.attempts()).isEqualTo(1);
        }
    }

    /** Worker 300 s behind: leases and backoff still follow the database clock. */
    @Test
    void workerClockSkewed() {
        try (JobqProcess worker = ShortSettings.workerBuilder(getClass(), db, "worker-behind", "r11-skewed", "10s")
                .fakeTime("-300s").start()) {
            ShortSettings.awaitStarted(worker, "r11-skewed");
            assertSkewed(worker, -300);

            // Lease: now() + 2 s by the database clock, renewed by heartbeats; never reaped as expired.
            long sleeper = jobs.enqueue("sleep", "{\"ms\": 4000}");
            Row running = jobs.await(sleeper, Duration.ofSeconds(10), "running", r -> r.state().equals("running"));
            assertThat(Duration.between(running.dbNow(), running.lockedUntil()))
                    .isBetween(Duration.ZERO, Duration.ofSeconds(2));
            Row slept = jobs.await(sleeper, Duration.ofSeconds(20), "finished", r -> !r.state().equals("running"));
            assertThat(slept.state()).isEqualTo("done");
            assertThat(slept.attempts()).isEqualTo(1);
            assertThat(slept.lastError()).isNull();

            // Backoff: the retry is due within [failure, failure + 1 s] by the database clock (base 1 s).
            long failing = jobs.enqueue("fail", "{\"times\": 1}");
            Row retried = jobs.await(failing, Duration.ofSeconds(20), "done", r -> r.state().equals("done"));
            assertThat(retried.attempts()).isEqualTo(2);
            assertThat(retried.lastError()).contains("planned failure 1 of 1");
            // run_at keeps the retry time the failure set; the first attempt began at created_at or later.
            assertThat(retried.runAt()).isBetween(retried.createdAt(), retried.createdAt().plusSeconds(3));
            assertThat(Duration.between(retried.runAt(), retried.startedAt()))
                    .isBetween(Duration.ZERO, Duration.ofMillis(1500));
        }
    }

    /**
     * The process's latest log line (just written: its start-up line) carries a timestamp from its
     * JVM's wall clock, off by {@code seconds} from real time.
     */
    private static void assertSkewed(JobqProcess p, long seconds) {
        String line = p.output().lines().filter(l -> l.matches("^\\d{4}-\\d\\d-\\d\\dT.*")).reduce((x, y) -> y)
                .orElseThrow(() -> new AssertionError(p.name() + " logged nothing"));
        Instant logged = Instant.parse(line.substring(0, line.indexOf(' ')));
        long off = Duration.between(Instant.now(), logged).toSeconds();
        assertThat(off).as("%s's clock offset, from its log line %s", p.name(), line)
                .isBetween(seconds - 30, seconds + 30);
    }
}
