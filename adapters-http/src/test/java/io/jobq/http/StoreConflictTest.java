package io.jobq.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import io.jobq.application.fake.Await;
import io.jobq.application.port.EnqueueResult;
import io.jobq.application.port.JobStore;
import io.jobq.application.port.NewJob;
import io.jobq.application.port.StoreConflictException;
import io.jobq.application.port.TenantSettings;
import io.jobq.application.port.TenantUpdate;
import io.jobq.postgres.PostgresJobStore;
import io.jobq.postgres.testing.ForwardingJobStore;
import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A write that a concurrent transaction aborts (serialization failure or deadlock) is never a 500:
 * the store retries it, and when its retries run out the API answers 503 {@code concurrent_update}
 * with {@code Retry-After}, having written nothing.
 */
@ExtendWith(PostgresDatabaseExtension.class)
class StoreConflictTest {
    static final Duration SOON = Duration.ofSeconds(10);

    TestDatabase db;
    HikariDataSource pool;
    ApiFixture api;

    @BeforeEach
    void setUp(TestDatabase db) {
        this.db = db;
        db.emptyTables();
        // As on a server whose default_transaction_isolation is SERIALIZABLE.
        pool = db.newPool(2, "TRANSACTION_SERIALIZABLE");
    }

    @AfterEach
    void tearDown() {
        if (api != null) api.close();
        pool.close();
    }

    ApiClient start(JobStore store) {
        api = ApiFixture.start(db, store, HttpSettings.builder().retryAfter(Duration.ofSeconds(2)).build());
        return api.client();
    }

    @Test
    void aWeightChangeRacingAConcurrentUpdateOfTheSameTenantAnswers200() throws Exception {
        ApiClient client = start(new PostgresJobStore(pool));
        assertThat(client.put("/tenants/acme", "{\"weight\": 1}").status()).isEqualTo(200);

        try (Connection holder = db.newConnection(); Statement st = holder.createStatement()) {
            holder.setAutoCommit(false);
            st.executeUpdate("UPDATE tenants SET weight = 2 WHERE tenant = 'acme'");
            CompletableFuture<ApiClient.Reply> put =
                    CompletableFuture.supplyAsync(() -> client.put("/tenants/acme", "{\"weight\": 5}"));
            Await.until(SOON, "the PUT waits for the tenant's row lock", () -> db.sessionsWaitingOnLocks() > 0);
            holder.commit();

            ApiClient.Reply reply = put.get(SOON.toSeconds(), TimeUnit.SECONDS);
            assertThat(reply.status()).as(reply.toString()).isEqualTo(200);
            assertThat(reply.json().get("weight").asDouble()).isEqualTo(5.0);
        }
        assertThat(db.dsl().resultQuery("SELECT weight FROM tenants WHERE tenant = 'acme'").fetchSingle(0, Double.class))
                .isEqualTo(5.0);
    }

    @Test
    void aConflictThatOutlastsTheStoresRetriesIs503WithRetryAfterAndWritesNothing() {
        ApiClient client = start(new ForwardingJobStore(new PostgresJobStore(pool)) {
            @Override
            public EnqueueResult enqueue(NewJob job) {
                throw new StoreConflictException("enqueue", new RuntimeException("40P01"));
            }

            @Override
            public TenantSettings configureTenant(TenantUpdate update) {
                throw new StoreConflictException("configure tenant", new RuntimeException("40001"));
            }
        });

        for (ApiClient.Reply r : new ApiClient.Reply[] {
                client.post("/jobs", "{\"task\": \"t\"}"),
                client.put("/tenants/acme", "{\"weight\": 3}")}) {
            assertThat(r.status()).as(r.toString()).isEqualTo(503);
            assertThat(r.errorCode()).isEqualTo("concurrent_update");
            assertThat(r.headers().firstValue("Retry-After")).hasValue("2");
            assertThat(r.text()).doesNotContain("Exception", "40P01", "40001", "\tat ");
        }
        assertThat(db.dsl().resultQuery("SELECT count(*) FROM jobs").fetchSingle(0, Long.class)).isZero();
    }
}
