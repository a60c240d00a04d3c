package io.jobq.bench;

import java.util.Arrays;
import java.util.Collection;

/**
 * Percentiles by the nearest-rank method over ALL samples (no interpolation, no sampling): the p-th
 * percentile of n sorted samples is the one at rank {@code ceil(p / 100 * n)}, counting from 1. It is
 * always one of the measured values. Example: samples 15, 20, 35, 40, 50 give p30 = 20, p50 = 35,
 * p95 = 50, and p100 = max = 50.
 *
 * <p>Immutable; built once from the samples (copied and sorted).
 */
public final class Percentiles {
    /** The name printed in reports, so a reader knows how the numbers were taken. */
    public static final String METHOD = "nearest-rank over all samples";

    private final double[] sorted;

    private Percentiles(double[] sorted) {
        this.sorted = sorted;
    }

    /** @throws IllegalArgumentException if there are no samples or one is NaN */
    public static Percentiles of(Collection<? extends Number> samples) {
        double[] values = samples.stream().mapToDouble(Number::doubleValue).toArray();
        return of(values);
    }

    /** @throws IllegalArgumentException if there are no samples or one is NaN */
    public static Percentiles of(double... samples) {
        if (samples.length == 0) throw new IllegalArgumentException("no samples");
        double[] copy = samples.clone();
        for (double v : copy) {
            if (Double.isNaN(v)) throw new IllegalArgumentException("a sample is NaN");
        }
        Arrays.sort(copy);
        return new Percentiles(copy);
    }

    /**
     * The nearest-rank p-th percentile.
     *
     * @param p in (0, 100]
     * @throws IllegalArgumentException if p is out of range
     */
    public double p(double p) {
        if (!(p > 0 && p <= 100)) throw new IllegalArgumentException("p must be in (0, 100], was " + p);
        int rank = (int) Math.ceil(p / 100.0 * sorted.length);
        // ceil of a product of doubles can land one above an exact integer (e.g. 0.95 * 20 = 19.000000000000004)
        if (rank > 1 && Math.abs((rank - 1) - p / 100.0 * sorted.length) < 1e-9) rank--;
        return sorted[Math.max(1, rank) - 1];
    }

    public double p50() {
        return p(50);
    }

    public double p95() {
        return p(95);
    }

    public double max() {
        return sorted[sorted.length - 1];
    }

    public double min() {
        return sorted[0];
    }

    public int count() {
        return sorted.length;
    }

    /** The middle value of an odd count, the lower middle of an even one (nearest-rank p50). */
    public static double median(double... samples) {
        return of(samples).p50();
    }
}
