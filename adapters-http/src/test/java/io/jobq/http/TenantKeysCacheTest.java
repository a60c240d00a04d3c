package io.jobq.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.application.fake.InMemoryJobStore;
import io.jobq.application.port.ApiKeyStore.ApiKey;
import io.jobq.domain.tenant.TenantId;
import io.jobq.postgres.testing.ForwardingJobStore;
import java.time.InstantSource;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The lookup cache of {@link TenantKeys}: a revocation here wins over a lookup in flight; a forged key finds nothing. */
class TenantKeysCacheTest {
    private final InMemoryJobStore real = new InMemoryJobStore(InstantSource.system());
    /** Set to hold lookups after the store answered and before the answer reaches the cache. */
    private volatile CountDownLatch answered;
    private volatile CountDownLatch release;
    private final ForwardingJobStore store = new ForwardingJobStore(real) {
        @Override
        public Optional<ApiKey> apiKey(String id) {
            Optional<ApiKey> key = super.apiKey(id);
            if (release != null) {
                answered.countDown();
                try {
                    release.await(5, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return key;
        }
    };
    private final TenantKeys keys = new TenantKeys(store);

    @Test
    void aKeyRevokedWhileItsLookupIsInFlightIsRefused() throws Exception {
        TenantKeys.NewKey made = keys.create(TenantId.of("acme"));
        answered = new CountDownLatch(1);
        release = new CountDownLatch(1);
        CompletableFuture<Optional<TenantId>> inFlight = CompletableFuture.supplyAsync(() -> keys.tenantOf(made.key()));
        assertThat(answered.await(5, TimeUnit.SECONDS)).as("the store answered: live").isTrue();
        real.revokeApiKey(TenantId.of("acme"), made.stored().id());
        keys.forget(made.stored().id());
        release.countDown(); // the stale answer now reaches the cache
        assertThat(inFlight.get(5, TimeUnit.SECONDS)).as("the in-flight answer").isEmpty();
        release = null;
        assertThat(keys.tenantOf(made.key())).as("and every later one").isEmpty();
    }

    @Test
    void aLiveKeyIsFoundAndAForgedOneIsNot() {
        TenantKeys.NewKey made = keys.create(TenantId.of("acme"));
        assertThat(keys.tenantOf(made.key())).contains(TenantId.of("acme"));
        assertThat(keys.tenantOf(made.key().substring(0, 60) + "x")).isEmpty();
        assertThat(keys.tenantOf("jobq_" + "a".repeat(16) + "_" + "b".repeat(43))).isEmpty();
        assertThat(made.toString()).doesNotContain(made.key());
    }
}
