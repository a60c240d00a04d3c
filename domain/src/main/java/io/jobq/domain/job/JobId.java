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

    /**
     * An id written in decimal, as in a URL: ASCII digits only (no sign, no spaces, no exponent), 1 to
     * 9,223,372,036,854,775,807. Leading zeros are allowed ({@code 007} is 7).
     *
     * @param what the field's name for the message, e.g. "id" or "after"
     * @throws IllegalArgumentException naming {@code what} and quoting at most a short prefix of {@code text}
     */
    public static JobId parse(String what, String text) {
        boolean digits = !text.isEmpty() && text.chars().allMatch(c -> c >= '0' && c <= '9');
        long value = 0;
        if (digits) {
            try {
                value = Long.parseLong(text);
            } catch (NumberFormatException tooLarge) {
                value = 0;
            }
        }
        if (value < 1) {
            throw new IllegalArgumentException(what + " must be a job id, an integer 1-" + Long.MAX_VALUE + ", was \""
                    + StoredText.excerpt(text) + "\"");
        }
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
