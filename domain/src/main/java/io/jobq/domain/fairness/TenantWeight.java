package io.jobq.domain.fairness;

import io.jobq.domain.job.StoredText;
import java.math.BigDecimal;

/**
 * A tenant's share of a queue's workers: with weights 3 and 1, two backlogged tenants are served
 * 3:1. Each job advances the tenant's virtual time by {@code 1 / weight}, so a weight-2 tenant's
 * virtual time advances half as fast as a weight-1 tenant's.
 *
 * <p>Range: {@value #MIN} to {@value #MAX}. Outside it a tenant's step per job is so large or so small
 * that virtual times (doubles) leave their precision within a realistic number of jobs (a weight of 1e300
 * would not move any tag at all). The database enforces the same range. The store computes the tags
 * (start-time fair queuing; {@code FairTags} in the PostgreSQL adapter documents the formula).
 *
 * @param value in [{@value #MIN}, {@value #MAX}]
 */
public record TenantWeight(double value) {
    /** The weight of a tenant nobody configured. */
    public static final TenantWeight DEFAULT = new TenantWeight(1.0);
    /** Smallest accepted weight. */
    public static final double MIN = 1e-6;
    /** Largest accepted weight. */
    public static final double MAX = 1e6;

    /** @throws IllegalArgumentException if the weight is zero, negative, NaN, infinite, or outside [1e-6, 1e6] */
    public TenantWeight {
        if (!(value > 0) || Double.isInfinite(value)) {
            throw new IllegalArgumentException("weight must be a positive finite number, was " + value);
        }
        if (value < MIN) throw new IllegalArgumentException("weight is too small: must be >= " + MIN + ", was " + value);
        if (value > MAX) throw new IllegalArgumentException("weight is too large: must be <= " + MAX + ", was " + value);
    }

    public static TenantWeight of(double value) {
        return new TenantWeight(value);
    }

    private static final BigDecimal MIN_EXACT = BigDecimal.valueOf(MIN).stripTrailingZeros();
    private static final BigDecimal MAX_EXACT = BigDecimal.valueOf(MAX).stripTrailingZeros();

    /**
     * The weight an exact decimal (e.g. a JSON number) asks for. Checked as a decimal, before it becomes
     * a double: {@code 1e-400} is refused as too small instead of rounding to 0, {@code 1000000.0000001}
     * as too large instead of rounding to 1e6, and {@code 1e2147483647} costs no more than {@code 3}
     * (comparisons of decimals look at their exponents first; the value is never printed in full).
     *
     * @throws IllegalArgumentException outside [0.000001, 1000000], naming "weight" and quoting at most
     *     a short prefix of the value
     */
    public static TenantWeight of(BigDecimal exact) {
        if (exact.compareTo(MIN_EXACT) < 0 || exact.compareTo(MAX_EXACT) > 0) {
            throw new IllegalArgumentException("weight must be " + MIN_EXACT.toPlainString() + "-" + MAX_EXACT.toPlainString()
                    + ", was " + StoredText.excerpt(exact.toString()));
        }
        return new TenantWeight(exact.doubleValue());
    }

    /** The virtual time one job of this tenant costs: {@code 1 / weight}. */
    public double step() {
        return 1.0 / value;
    }
}
