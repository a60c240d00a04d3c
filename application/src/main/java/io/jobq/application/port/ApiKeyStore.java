package io.jobq.application.port;

import io.jobq.domain.tenant.TenantId;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The store's part in tenant API keys ({@link JobStore} extends it). It keeps only a digest of each key's
 * secret, never the key; making and checking keys is the HTTP adapter's ({@code TenantKeys}).
 *
 * <p>Errors as {@link JobStore}'s.
 */
public interface ApiKeyStore {

    /**
     * Saves a new key.
     *
     * @return the key as stored, with the store's {@code createdAt}
     * @throws IllegalArgumentException if {@code key.id()} is taken
     */
    ApiKey saveApiKey(ApiKey key);

    /** The key with this id, if it exists and is not revoked. */
    Optional<ApiKey> apiKey(String id);

    /** The tenant's keys that are not revoked, oldest first. */
    List<ApiKey> apiKeys(TenantId tenant);

    /** Revokes the tenant's key. @return whether a key of that tenant with that id was live */
    boolean revokeApiKey(TenantId tenant, String id);

    /**
     * A tenant's API key as stored.
     *
     * @param id the public part of the key, 1-32 characters of {@code [a-z0-9]}
     * @param digest SHA-256 of the whole key, 32 bytes
     * @param createdAt by the store's clock (ignored by {@link #saveApiKey}, which sets it)
     */
    record ApiKey(String id, TenantId tenant, byte[] digest, Instant createdAt) {
        public ApiKey {
            Objects.requireNonNull(id, "id");
            Objects.requireNonNull(tenant, "tenant");
            Objects.requireNonNull(digest, "digest");
            Objects.requireNonNull(createdAt, "createdAt");
            if (!id.matches("[a-z0-9]{1,32}")) throw new IllegalArgumentException("key id must be 1-32 characters of [a-z0-9]");
            if (digest.length != 32) throw new IllegalArgumentException("digest must be 32 bytes (SHA-256), was " + digest.length);
            digest = digest.clone();
        }

        @Override
        public byte[] digest() {
            return digest.clone();
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof ApiKey k && k.id.equals(id) && k.tenant.equals(tenant) && Arrays.equals(k.digest, digest)
                    && k.createdAt.equals(createdAt);
        }

        @Override
        public int hashCode() {
            return Objects.hash(id, tenant, Arrays.hashCode(digest), createdAt);
        }

        @Override
        public String toString() {
            return "ApiKey[" + id + " of " + tenant + ", created " + createdAt + "]";
        }
    }
}
