package io.jobq.bootstrap.robustness;

import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The launcher's API keys on a real {@code jobq api}: with {@code JOBQ_ADMIN_KEY} requests need it and the key
 * never reaches the log, whatever is sent; without one the process warns at start that the API is open.
 */
@ExtendWith(PostgresDatabaseExtension.class)
class AdminKeyIT {
    static final String KEY = "it-admin-key-0123456789-abcdefghijkl";

    @Test
    void withAKeyRequestsNeedItAndTheLogNeverShowsIt(TestDatabase db) {
        int port = JobqProcess.freePort();
        try (JobqProcess api = JobqProcess.builder(getClass(), "keyed", db.jdbcUrl()).env("JOBQ_ADMIN_KEY", KEY)
                .args("api", "--port", Integer.toString(port), "--log-level", "DEBUG").start()) {
            Http http = new Http(port);
            http.awaitHealthy(api, ShortSettings.START_UP);
            assertThat(http.get("/stats").status()).isEqualTo(401);
            assertThat(http.get("/stats", KEY).status()).isEqualTo(200);
            assertThat(http.get("/stats", KEY + "-wrong").status()).isEqualTo(401);
            assertThat(http.get("/jobs/1", KEY.substring(3)).status()).isEqualTo(401);
            Http.Response made = http.post("/tenants/acme/keys", "", KEY);
            assertThat(made.status()).isEqualTo(201);
            String tenantKey = made.body().get("key").asText();
            assertThat(http.post("/jobs", "{\"task\": \"noop\"}", tenantKey).status()).isEqualTo(201);
            assertThat(http.get("/stats", tenantKey).status()).isEqualTo(403);
            api.awaitLine(ShortSettings.START_UP, "HTTP API listening on 127.0.0.1:" + port);
            assertThat(api.output()).doesNotContain(KEY).doesNotContain(KEY.substring(3)).doesNotContain(tenantKey.substring(22))
                    .doesNotContain("the HTTP API is open");
        }
    }

    @Test
    void withoutAKeyTheProcessSaysTheApiIsOpen(TestDatabase db) {
        int port = JobqProcess.freePort();
        try (JobqProcess api = JobqProcess.builder(getClass(), "open", db.jdbcUrl()).args("api", "--port", Integer.toString(port)).start()) {
            new Http(port).awaitHealthy(api, ShortSettings.START_UP);
            assertThat(api.awaitLine(ShortSettings.START_UP, "the HTTP API is open")).contains("WARN").contains("JOBQ_ADMIN_KEY");
        }
    }
}
