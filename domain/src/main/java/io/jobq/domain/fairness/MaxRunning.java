package io.jobq.domain.fairness;

import io.jobq.domain.job.StoredText;
import java.math.BigDecimal;

/**
 * A tenant's cap in one queue: at most this many of its jobs there are queued or running at once, so at
 * most this many run at once, across every worker. Jobs beyond it wait as {@code held} and are released,
 * oldest first, as the tenant's runs end.
 *
 * @param value 1 to {@value #MAX}
 */
public record MaxRunning(int value) {
    /** Largest accepted cap: 1,000,000 (far above any worker fleet; a larger number means "no cap"). */
    public static final int MAX = 1_000_000;

    /** @throws IllegalArgumentException outside 1..{@value #MAX}, naming max_running */
    public MaxRunning {
        if (value < 1 || value > MAX) {
            throw new IllegalArgumentException("max_running must be 1-" + MAX + " (or null for no cap), was " + value);
        }
    }

    public static MaxRunning of(int value) {
        return new MaxRunning(value);
    }

    /**
     * The cap an exact decimal (a JSON number) asks for: a whole number in 1..{@value #MAX}. Checked as a
     * decimal, so {@code 1e999999999} and {@code 2.5} are refused without being expanded or rounded.
     *
     * @throws IllegalArgumentException naming max_running, quoting at most a short prefix of the value
     */
    public static MaxRunning of(BigDecimal exact) {
        BigDecimal stripped = exact.stripTrailingZeros();
        if (stripped.scale() > 0 || stripped.compareTo(BigDecimal.ONE) < 0 || stripped.compareTo(BigDecimal.valueOf(MAX)) > 0) {
            throw new IllegalArgumentException("max_running must be a whole number 1-" + MAX + " (or null for no cap), was "
                    + StoredText.excerpt(exact.toString()));
        }
        return new MaxRunning(stripped.intValueExact());
    }
}
