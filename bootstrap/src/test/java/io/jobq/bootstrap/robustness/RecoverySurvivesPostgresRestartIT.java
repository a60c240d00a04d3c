package io.jobq.bootstrap.robustness;

import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.application.fake.Await;
import io.jobq.bootstrap.robustness.Jobs.Row;
import io.jobq.postgres.testing.TestDatabase;
import io.jobq.postgres.testing.ThrowawayPostgres;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Robustness case R10: PostgreSQL restarts in the middle of recovery. Worker A claims 50 {@code sleep} 30 s jobs and
 * is SIGKILLed; worker B starts; when B begins reaping, PostgreSQL is restarted ({@code pg_ctl restart
 * -m fast}). The server restarted is a {@link ThrowawayPostgres} cluster of this class's own, never the
 * one other tests share or any the user runs; its logs end up in {@code target/it-logs/<class>/postgres/}.
 */
class RecoverySurvivesPostgresRestartIT {
    private static final int JOBS = 50;
    private static ThrowawayPostgres postgres;

    @BeforeAll
    static void ownCluster() {
        postgres = ThrowawayPostgres.start(
                Path.of(System.getProperty("jobq.logs", "target/it-logs"), "RecoverySurvivesPostgresRestartIT", "postgres"));
    }

    @AfterAll
    static void removeCluster() {
        if (postgres != null) postgres.close();
    }

    @Test
    void workersAndApiReconnectAndEveryJobEndsDoneWithTwoAttempts() throws Exception {
        TestDatabase db = postgres.database();
        Jobs jobs = new Jobs(db);
        int port = JobqProcess.freePort();
        String[] fifty = {"--concurrency", "50", "--claim-batch", "50"};
        try (JobqProcess api = JobqProcess.builder(getClass(), "api", db.jdbcUrl())
                     .args("api", "--port", Integer.toString(port)).start();
             JobqProcess a = ShortSettings.worker(getClass(), db, "r10-A", "10s", fifty)) {
            Http http = new Http(port);
            http.awaitHealthy(api, ShortSettings.START_UP);
            List<Long> ids = new ArrayList<>();
            for (int i = 0; i < JOBS; i++) ids.add(jobs.enqueue("sleep", "{\"ms\": 30000}"));
            Await.condition(Duration.ofSeconds(60), "A runs all 50",
                    () -> jobs.all().stream().filter(r -> r.state().equals("running")).count() == JOBS);
            a.kill();

            try (JobqProcess b = ShortSettings.worker(getClass(), db, "r10-B", "10s", fifty)) {
                // When B begins reaping, restart PostgreSQL.
                Await.condition(Duration.ofSeconds(30), "B begins reaping", () -> jobs.all().stream()
                        .anyMatch(r -> r.lastError() != null && r.lastError().contains("lease expired")));
                long restartBegan = System.nanoTime();
                postgres.restart();
                // pg_ctl -w returns once the server accepts connections again (same host: same clock).
                Instant restarted = Instant.now();
                System.out.printf("R10: restart took %d ms; back at %s%n", (System.nanoTime() - restartBegan) / 1_000_000,
                        restarted);

                // Within 3 maintenance periods after the restart no row is running with an expired lease.
                Row[] offender = new Row[1];
                Instant clean = Await.value(Duration.ofSeconds(30), "no running row with an expired lease", () -> {
                    List<Row> rows = jobs.all();
                    Row expired = rows.stream().filter(Row::runningWithExpiredLease).findFirst().orElse(null);
                    if (expired != null) offender[0] = expired;
                    return expired == null ? rows.getFirst().dbNow() : null;
                });
                assertThat(Duration.between(restarted, clean))
                        .as("from the restart (back at %s) to no expired running lease; last offender %s",
                                restarted, offender[0])
                        .isLessThanOrEqualTo(Duration.ofMillis(3 * 500 + 1000)); // + slack for a busy machine

                // The API reconnects on its own: the first request after the restart is served.
                long before = System.nanoTime();
                Http.Response created = http.post("/jobs", "{\"task\": \"noop\"}");
                System.out.printf("R10: POST /jobs after the restart took %d ms%n", (System.nanoTime() - before) / 1_000_000);
                assertThat(created.status()).as("POST /jobs after the restart: %s", created.body()).isEqualTo(201);
                long probe = created.body().get("id").asLong();

                // All 50 end done with attempts = 2; none runs three times. Leases stay live meanwhile.
                Await.condition(Duration.ofSeconds(90), "all 50 done", () -> {
                    List<Row> rows = jobs.all();
                    assertThat(rows).noneMatch(r -> r.attempts() > 2);
                    return rows.stream().filter(r -> ids.contains(r.id())).allMatch(r -> r.state().equals("done"));
                });
                Map<Integer, Long> attempts = ids.stream().map(jobs::row)
                        .collect(Collectors.groupingBy(Row::attempts, Collectors.counting()));
                assertThat(attempts).isEqualTo(Map.of(2, (long) JOBS));
                for (long id : ids) {
                    assertThat(WorkerLog.starts(b, id)).singleElement().asString().contains("attempt 2/5");
                }
                assertThat(jobs.row(probe).state()).isEqualTo("done");
                assertThat(http.get("/health").status()).isEqualTo(200);
            }
        }
    }
}
