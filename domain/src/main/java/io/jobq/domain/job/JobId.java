package io.jobq.domain.job;

/**
 * A job's identity: the positive {@code bigint} the database assigns on insert. Ids grow with
 * insertion order, which FIFO claiming and keyset pagination rely on.
 */
public record JobId(long value) implements Comparable<JobId> {
    /** @throws IllegalArgumentException if {@code value < 1} */
    public JobId {
        if (value < 1) throw new IllegalArgumentException("job id must be >= 1, was " + value);
    }

    public static JobId of(long value) {
        return new JobId(value);
    }

    @Override
    public int compareTo(JobId other) {
        return Long.compare(value, other.value);
    }

    @Override
    public String toString() {
        return Long.toString(value);
    }
}
