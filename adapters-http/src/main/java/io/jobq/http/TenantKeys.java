package io.jobq.http;

import io.jobq.application.port.ApiKeyStore.ApiKey;
import io.jobq.application.port.JobStore;
import io.jobq.domain.tenant.TenantId;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Tenants' API keys: {@code jobq_<id>_<secret>}, the id 16 characters of {@code [a-z0-9]} (80 bits) and the secret
 * 32 random bytes (256 bits, {@link SecureRandom}) in base64url. The store keeps the id, the tenant and the SHA-256
 * digest of the whole key; the key itself is shown once, in the answer that creates it. A presented key is
 * looked up by its id and its digest compared with {@link MessageDigest#isEqual} (also against a dummy digest
 * when the id is unknown, so timing does not tell ids apart). Lookups are cached for {@value #CACHE_SECONDS} s:
 * a key revoked through this server stops working at once, through another API process within that time.
 */
final class TenantKeys {
    static final int CACHE_SECONDS = 5;
    private static final Duration CACHE = Duration.ofSeconds(CACHE_SECONDS);
    private static final int MAX_CACHED = 10_000;
    private static final Pattern FORMAT = Pattern.compile("jobq_([a-z0-9]{16})_([A-Za-z0-9_-]{43})");
    private static final byte[] DUMMY = AccessKeys.digest("jobq_0000000000000000_no-such-key-no-such-key-no-such-key-xxxxxx");
    private static final String ID_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";

    private record Cached(Optional<ApiKey> key, Instant until) {}

    private final JobStore store;
    private final SecureRandom random = new SecureRandom();
    /** Live keys looked up (few: one per tenant key in use). */
    private final ConcurrentHashMap<String, Cached> live = new ConcurrentHashMap<>();
    /** Ids found to be no key: apart, so that ids made up by the thousand never push out the live ones. */
    private final ConcurrentHashMap<String, Cached> absent = new ConcurrentHashMap<>();
    /** Keys revoked through this server: never cached again (ids are never reused), whatever lookup was in flight. */
    private final java.util.Set<String> revoked = ConcurrentHashMap.newKeySet();

    TenantKeys(JobStore store) {
        this.store = store;
    }

    /** A new key of {@code tenant}: saved as a digest, returned whole (the only time it is). */
    NewKey create(TenantId tenant) {
        StringBuilder id = new StringBuilder(16);
        for (int i = 0; i < 16; i++) id.append(ID_ALPHABET.charAt(random.nextInt(ID_ALPHABET.length())));
        byte[] secret = new byte[32];
        random.nextBytes(secret);
        String key = "jobq_" + id + "_" + Base64.getUrlEncoder().withoutPadding().encodeToString(secret);
        ApiKey saved = store.saveApiKey(new ApiKey(id.toString(), tenant, AccessKeys.digest(key), Instant.EPOCH));
        return new NewKey(saved, key);
    }

    /** What {@link #create} made: the stored record and the key. */
    record NewKey(ApiKey stored, String key) {
        @Override
        public String toString() {
            return "NewKey[" + stored + "]"; // never the key
        }
    }

    /** The tenant whose key {@code presented} is, if it is one that is live. */
    Optional<TenantId> tenantOf(String presented) {
        Matcher m = FORMAT.matcher(presented);
        if (!m.matches()) return Optional.empty();
        Optional<ApiKey> key = lookUp(m.group(1));
        byte[] digest = AccessKeys.digest(presented);
        boolean valid = MessageDigest.isEqual(digest, key.map(ApiKey::digest).orElse(DUMMY));
        return valid ? key.map(ApiKey::tenant) : Optional.empty();
    }

    /** The key was revoked through this server: refused from now on, even by a lookup already in flight. */
    void forget(String id) {
        revoked.add(id);
        live.remove(id);
    }

    private Optional<ApiKey> lookUp(String id) {
        if (revoked.contains(id)) return Optional.empty();
        Instant now = Instant.now();
        Cached c = live.get(id);
        if (c == null) c = absent.get(id);
        if (c != null && now.isBefore(c.until())) return c.key();
        Optional<ApiKey> key = store.apiKey(id);
        ConcurrentHashMap<String, Cached> into = key.isPresent() ? live : absent;
        if (into.size() >= MAX_CACHED) into.clear(); // bounded: made-up ids must not fill the heap
        into.put(id, new Cached(key, now.plus(CACHE)));
        if (revoked.contains(id)) { // revoked while the store answered: do not let the stale answer stand
            live.remove(id);
            return Optional.empty();
        }
        return key;
    }
}
