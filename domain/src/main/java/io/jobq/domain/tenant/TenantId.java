package io.jobq.domain.tenant;

import io.jobq.domain.job.Identifier;

/**
 * The customer a job belongs to: the unit of fairness and the scope of idempotency keys.
 * 1 to 128 characters of {@code [A-Za-z0-9_.:-]}.
 */
public record TenantId(String value) {
    /** The tenant used when a request names none. */
    public static final TenantId DEFAULT = new TenantId("default");

    /** @throws IllegalArgumentException if the name breaks {@link Identifier}'s rule */
    public TenantId {
        Identifier.check("tenant", value);
    }

    public static TenantId of(String value) {
        return new TenantId(value);
    }

    @Override
    public String toString() {
        return value;
    }
}
