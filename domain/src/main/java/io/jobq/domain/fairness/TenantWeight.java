package io.jobq.domain.fairness;

/**
 * A tenant's share of a queue's workers: with weights 3 and 1, two backlogged tenants are served
 * 3:1. Each job advances the tenant's virtual time by {@code 1 / weight}, so a weight-2 tenant's
 * virtual time advances half as fast as a weight-1 tenant's.
 *
 * @param value positive and finite, and {@code 1 / value} finite too
 */
public record TenantWeight(double value) {
    /** The weight of a tenant nobody configured. */
    public static final TenantWeight DEFAULT = new TenantWeight(1.0);

    /** @throws IllegalArgumentException if the weight is zero, negative, NaN, infinite, or so small that 1/weight overflows */
    public TenantWeight {
        if (!(value > 0) || Double.isInfinite(value)) {
            throw new IllegalArgumentException("weight must be a positive finite number, was " + value);
        }
        // Positive and finite is not enough: below about 5.6e-309, 1/weight (the step per job) is infinite.
        if (Double.isInfinite(1.0 / value)) {
            throw new IllegalArgumentException("weight is too small: 1/weight must be finite, was " + value);
        }
    }

    public static TenantWeight of(double value) {
        return new TenantWeight(value);
    }

    /** The virtual time one job of this tenant costs: {@code 1 / weight}. */
    public double step() {
        return 1.0 / value;
    }
}
