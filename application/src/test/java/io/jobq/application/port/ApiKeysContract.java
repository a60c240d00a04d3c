package io.jobq.application.port;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.jobq.application.port.ApiKeyStore.ApiKey;
import io.jobq.domain.tenant.TenantId;
import java.time.Instant;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** Tenants' API keys in the store ({@link ApiKeyStore}) on every store: digests only, revocation for good. */
public abstract class ApiKeysContract {
    private static final TenantId ACME = TenantId.of("acme");
    private static final TenantId GLOBEX = TenantId.of("globex");

    /** The store under test, empty at the start of each test. */
    protected abstract JobStore store();

    private static ApiKey key(String id, TenantId tenant, int fill) {
        byte[] digest = new byte[32];
        Arrays.fill(digest, (byte) fill);
        return new ApiKey(id, tenant, digest, Instant.EPOCH);
    }

    @Test
    void aSavedKeyIsFoundByIdAndListedWithItsTenantsOnly() {
        ApiKey saved = store().saveApiKey(key("k1", ACME, 1));
        assertThat(saved.createdAt()).as("the store's clock, not the caller's").isAfter(Instant.EPOCH);
        store().saveApiKey(key("k2", GLOBEX, 2));
        store().saveApiKey(key("k3", ACME, 3));
        ApiKey k1 = store().apiKey("k1").orElseThrow();
        assertThat(k1.tenant()).isEqualTo(ACME);
        assertThat(k1.digest()).isEqualTo(key("k1", ACME, 1).digest());
        assertThat(store().apiKeys(ACME)).extracting(ApiKey::id).containsExactly("k1", "k3");
        assertThat(store().apiKey("nope")).isEmpty();
    }

    @Test
    void aRevokedKeyIsGoneForGoodAndItsIdNeverReused() {
        store().saveApiKey(key("k1", ACME, 1));
        assertThat(store().revokeApiKey(GLOBEX, "k1")).as("another tenant's key").isFalse();
        assertThat(store().apiKey("k1")).isPresent();
        assertThat(store().revokeApiKey(ACME, "k1")).isTrue();
        assertThat(store().apiKey("k1")).isEmpty();
        assertThat(store().apiKeys(ACME)).isEmpty();
        assertThat(store().revokeApiKey(ACME, "k1")).isFalse();
        assertThatThrownBy(() -> store().saveApiKey(key("k1", ACME, 9))).isInstanceOf(IllegalArgumentException.class);
    }
}
