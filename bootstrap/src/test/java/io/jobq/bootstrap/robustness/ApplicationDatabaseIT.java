package io.jobq.bootstrap.robustness;

import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.application.fake.Await;
import io.jobq.postgres.testing.ApplicationDatabase;
import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import java.time.Duration;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The launcher in an application's own database (issue 13): the application has {@code public.jobs},
 * {@code public.tenants} and {@code public.flyway_schema_history} with its V1, and DATABASE_URL names no
 * schema. {@code jobq migrate}, then {@code jobq all}, run a job end to end in schema {@code jobq}; the
 * application's tables are untouched and its own Flyway still migrates its V2 afterwards.
 */
@ExtendWith(PostgresDatabaseExtension.class)
class ApplicationDatabaseIT {

    @Test
    void migrateAndAllWorkBesideTheApplicationsTablesAndItsFlywayStillWorksAfterwards(TestDatabase db) {
        String appUrl = ApplicationDatabase.url(db);
        ApplicationDatabase.beforeJobq(db);
        Flyway app = ApplicationDatabase.flyway(db).load();

        try (JobqProcess migrate = JobqProcess.builder(getClass(), "app-db-migrate", appUrl).args("migrate").start()) {
            assertThat(migrate.awaitExit(Duration.ofSeconds(60))).as(migrate.output()).isZero();
        }
        int port = JobqProcess.freePort();
        try (JobqProcess all = JobqProcess.builder(getClass(), "app-db-all", appUrl)
                .args("all", "--port", String.valueOf(port), "--poll-interval", "200ms").start()) {
            Http http = new Http(port);
            http.awaitHealthy(all, Duration.ofSeconds(60));
            Http.Response created = http.post("/jobs", "{\"task\": \"word_count\", \"tenant\": \"acme\", \"payload\": {\"text\": \"in your database\"}}");
            assertThat(created.status()).as(created.body().toString()).isEqualTo(201);
            long id = created.body().get("id").asLong();
            Await.condition(Duration.ofSeconds(30), "job " + id + " done", () ->
                    http.get("/jobs/" + id).body().path("status").asText().equals("done"));
            assertThat(http.get("/jobs/" + id).body().path("result").path("words").asInt()).isEqualTo(3);
        }

        assertThat(app.migrate().migrationsExecuted).as("the application's V2").isEqualTo(1);
        assertThat(app.validateWithResult().validationSuccessful).isTrue();
        assertThat(db.dsl().resultQuery("SELECT count(*) FROM public.tenants WHERE name = 'acme'").fetchSingle(0, Long.class))
                .as("the application's tenants row").isEqualTo(1);
        assertThat(db.dsl().resultQuery("SELECT count(*) FROM jobq.jobs WHERE state = 'done'").fetchSingle(0, Long.class))
                .isEqualTo(1);
    }
}
