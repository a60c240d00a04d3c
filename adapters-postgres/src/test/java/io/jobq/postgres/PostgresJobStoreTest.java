package io.jobq.postgres;

import static io.jobq.postgres.StoreFixtures.Q;
import static io.jobq.postgres.StoreFixtures.TASK;
import static io.jobq.postgres.StoreFixtures.W1;
import static io.jobq.postgres.StoreFixtures.claim;
import static io.jobq.postgres.StoreFixtures.job;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.jobq.application.fake.Await;
import io.jobq.application.port.ExpiredLeaseDecider;
import io.jobq.application.port.NewJobBatch;
import io.jobq.application.port.StoreUnavailableException;
import io.jobq.domain.retry.RetryPolicy;
import io.jobq.domain.tenant.TenantId;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * What only the PostgreSQL store shows: the database's own clock and an unreachable server. The port's
 * semantics, shared with the in-memory fake, are {@link PostgresJobStoreContractTest}'s.
 */
class PostgresJobStoreTest extends PostgresStoreTestCase {

    @Nested
    class Enqueue {
        @Test
        void aBatchOverTheLimitIsRefusedBeforeTheDatabase() {
            List<String> payloads = Collections.nCopies(1001, "{}");
            assertThatThrownBy(() -> new NewJobBatch(TenantId.of("bulk"), Q, TASK, payloads, 3, Duration.ZERO))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("1-1000");
        }
    }

    @Nested
    class Reap {
        @Test
        void aShortLeaseRealyLapsesByTheDatabaseClock() {
            store.enqueue(job("t"));
            assertThat(store.claim(claim(W1, 1, Duration.ofMillis(200)))).hasSize(1);
            int reaped = Await.value(Duration.ofSeconds(10), "the 200 ms lease is reaped", () -> {
                int n = store.reapExpiredLeases(10, ExpiredLeaseDecider.by(RetryPolicy.defaults()));
                return n == 0 ? null : n;
            });
            assertThat(reaped).isEqualTo(1);
        }
    }

    @Nested
    class Reads {
        @Test
        void anUnreachableDatabaseIsReportedAsUnavailable() {
            try (var pool = PostgresPool.create("jdbc:postgresql://127.0.0.1:1/nowhere?user=postgres&connectTimeout=1", 1,
                    "unreachable", Duration.ofMillis(500))) {
                PostgresJobStore dead = new PostgresJobStore(pool);
                assertThatThrownBy(dead::ping).isInstanceOf(StoreUnavailableException.class);
                assertThatThrownBy(() -> dead.enqueue(job("t"))).isInstanceOf(StoreUnavailableException.class)
                        .hasMessageContaining("enqueue");
            }
        }
    }
}
