package io.jobq.domain.fairness;

import io.jobq.domain.job.StoredText;
import java.util.Arrays;

/**
 * What a queue charges its tenants for, in start-time fair queuing (SFQ; Goyal, Vin and Cheng, 1996).
 * {@link #JOBS} is the default.
 */
public enum Fairness {
    /** Every job costs its tenant the same, {@code 1/weight}: two backlogged tenants run equal numbers of jobs. */
    JOBS("jobs"),
    /**
     * A job costs its tenant its run time divided by its weight: two backlogged tenants get equal worker
     * time, however long their jobs take. The tag is assigned from an estimate (the tenant's moving average
     * of measured run times in the queue) and corrected by the measured time when the run ends.
     */
    WORK("work");

    private final String wireName;

    Fairness(String wireName) {
        this.wireName = wireName;
    }

    /** The name in the API and the database: {@code jobs} or {@code work}. */
    public String wireName() {
        return wireName;
    }

    /** @throws IllegalArgumentException naming fairness and the accepted values, for anything else */
    public static Fairness of(String name) {
        for (Fairness f : values()) {
            if (f.wireName.equals(name)) return f;
        }
        throw new IllegalArgumentException("fairness must be one of " + Arrays.stream(values()).map(Fairness::wireName).toList()
                + ", was " + (name == null ? "null" : "'" + StoredText.excerpt(name) + "'"));
    }
}
