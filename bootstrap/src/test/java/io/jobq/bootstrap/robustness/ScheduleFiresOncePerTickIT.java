package io.jobq.bootstrap.robustness;

import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Robustness case R17: a cron schedule fires once per tick across worker processes, with no leader. Three
 * {@code jobq worker} processes, one of them with its wall clock 300 s ahead (libfaketime), and an API
 * process; a 1-second schedule runs for 10 s: 9 to 11 jobs, no tick twice, one job per tick. Tagged serial
 * (timings, and a skewed JVM).
 */
@Tag("serial")
@ExtendWith(PostgresDatabaseExtension.class)
class ScheduleFiresOncePerTickIT {

    @Test
    void threeWorkersOneSecondScheduleTenSeconds(TestDatabase db) throws InterruptedException {
        db.emptyTables();
        int port = JobqProcess.freePort();
        try (JobqProcess api = JobqProcess.builder(getClass(), "api", db.jdbcUrl()).args("api", "--port", Integer.toString(port)).start();
             JobqProcess w1 = ShortSettings.worker(getClass(), db, "r17-w1", "5s");
             JobqProcess w2 = ShortSettings.worker(getClass(), db, "r17-w2", "5s");
             JobqProcess w3 = ShortSettings.workerBuilder(getClass(), db, "r17-w3", "r17-w3", "5s").fakeTime("+300s").start()) {
            ShortSettings.awaitStarted(w3, "r17-w3");
            Http http = new Http(port);
            http.awaitHealthy(api, ShortSettings.START_UP);

            Http.Response put = http.put("/schedules/every-second", "{\"cron\": \"* * * * * *\", \"task\": \"noop\"}");
            assertThat(put.status()).as("%s", put.body()).isEqualTo(201);
            java.time.Instant from = java.time.Instant.parse(put.body().get("updated_at").asText());
            Thread.sleep(11_500); // the 10 s measured are the 10 s after the schedule was made, by the database clock
            // jobs and fired ticks in one snapshot, before DELETE takes the ticks with the schedule
            org.jooq.Record counts = db.dsl().resultQuery("""
                    SELECT (SELECT count(*) FROM jobs WHERE task = 'noop'), (SELECT count(*) FROM schedule_ticks),
                           (SELECT count(DISTINCT job_id) FROM schedule_ticks),
                           (SELECT count(*) FROM schedule_ticks t JOIN jobs j ON j.id = t.job_id),
                           (SELECT count(*) FROM schedule_ticks WHERE tick > {0} AND tick <= {0} + interval '10 seconds')""",
                    java.time.OffsetDateTime.ofInstant(from, java.time.ZoneOffset.UTC)).fetchOne();
            assertThat(http.delete("/schedules/every-second").status()).isEqualTo(204);
            assertThat(counts.get(4, Long.class)).as("ticks fired in the schedule's first 10 s").isBetween(9L, 11L);
            long jobs = counts.get(0, Long.class);
            assertThat(counts.get(1, Long.class)).as("ticks fired (each once: the key)").isEqualTo(jobs);
            assertThat(counts.get(2, Long.class)).as("a job of its own per tick").isEqualTo(jobs);
            assertThat(counts.get(3, Long.class)).as("every tick's job exists").isEqualTo(jobs);
            // more than one process took part: the firing is shared, not led
            long firers = List.of(w1, w2, w3).stream().filter(w -> !w.lines("schedule every-second fired").isEmpty()).count();
            assertThat(firers).as("workers that fired a tick").isGreaterThanOrEqualTo(2);
        }
    }
}
