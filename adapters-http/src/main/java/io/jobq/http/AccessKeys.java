package io.jobq.http;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Objects;
import java.util.Optional;

/**
 * The keys configured for the API ({@link Authenticator} applies them). {@link #OPEN} (no admin key): anyone
 * who reaches the port, as before keys existed (the launcher warns at start). With an admin key, every request
 * but {@code GET /health} must carry {@code Authorization: Bearer <key>}: the admin key, the metrics key (for
 * {@code /metrics} only, so that a scraper need not hold the admin key) or a tenant's key ({@link TenantKeys}).
 *
 * <p>Only SHA-256 digests of the keys are kept, and a presented key is compared by its digest with
 * {@link MessageDigest#isEqual}, which takes the same time wherever the digests differ: the time an answer
 * takes says nothing about how much of a guess was right. Keys never appear in logs, error bodies or
 * {@link #toString}.
 */
public final class AccessKeys {
    /** Shortest key accepted: 20 characters (a random key of that length from a 64-symbol alphabet is 120 bits). */
    public static final int MIN_KEY_LENGTH = 20;

    /** No admin key: the API is open. */
    public static final AccessKeys OPEN = new AccessKeys(null, null);

    private final byte[] admin;
    private final byte[] metrics;

    private AccessKeys(byte[] admin, byte[] metrics) {
        this.admin = admin;
        this.metrics = metrics;
    }

    /**
     * Keys for the API.
     *
     * @param adminKey required for everything but {@code /health} when present
     * @param metricsKey also accepted on {@code /metrics}; only with an admin key
     * @throws IllegalArgumentException (never quoting a key) if a key is shorter than {@value #MIN_KEY_LENGTH}
     *     characters, has characters outside printable ASCII or blanks, or a metrics key comes without an admin key
     */
    public static AccessKeys of(Optional<String> adminKey, Optional<String> metricsKey) {
        Objects.requireNonNull(adminKey, "adminKey");
        Objects.requireNonNull(metricsKey, "metricsKey");
        if (adminKey.isEmpty() && metricsKey.isPresent()) {
            throw new IllegalArgumentException("a metrics key needs an admin key: without one every endpoint is open anyway");
        }
        return new AccessKeys(adminKey.map(k -> digest(checked("admin key", k))).orElse(null),
                metricsKey.map(k -> digest(checked("metrics key", k))).orElse(null));
    }

    /** Whether requests need a key at all. */
    public boolean isOpen() {
        return admin == null;
    }

    /**
     * Whether a request with this {@code Authorization} header (null: none) may read {@code /metrics}: any request
     * when no admin key is configured, else one bearing the admin or the metrics key. Used by a worker's metrics
     * port, which has no API beside it; both keys are compared, in constant time, whatever is presented.
     */
    public boolean opensMetrics(String authorization) {
        if (isOpen()) return true;
        Optional<String> presented = bearer(authorization);
        if (presented.isEmpty()) return false;
        boolean admin = isAdmin(presented.get());
        boolean metrics = isMetrics(presented.get());
        return admin || metrics;
    }

    /** The key of an {@code Authorization: Bearer <key>} header (scheme case-insensitive, blanks around it dropped); empty for none. */
    static Optional<String> bearer(String header) {
        if (header == null || !header.regionMatches(true, 0, "Bearer ", 0, 7)) return Optional.empty();
        String key = header.substring(7).strip();
        return key.isEmpty() ? Optional.empty() : Optional.of(key);
    }

    /** Whether {@code presented} is the admin key. */
    boolean isAdmin(String presented) {
        return admin != null && MessageDigest.isEqual(digest(presented), admin);
    }

    /** Whether {@code presented} is the metrics key. */
    boolean isMetrics(String presented) {
        return metrics != null && MessageDigest.isEqual(digest(presented), metrics);
    }

    private static String checked(String what, String key) {
        if (key.length() < MIN_KEY_LENGTH) {
            throw new IllegalArgumentException("the " + what + " must be at least " + MIN_KEY_LENGTH + " characters (it is not shown)");
        }
        if (!key.chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
            throw new IllegalArgumentException("the " + what + " must be printable ASCII without blanks (it is not shown)");
        }
        return key;
    }

    /** SHA-256 of a key's UTF-8 bytes. */
    static byte[] digest(String key) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    @Override
    public String toString() {
        return "AccessKeys[admin=" + (admin == null ? "none (open)" : "set") + ", metrics=" + (metrics == null ? "none" : "set") + "]";
    }
}
