package io.jobq.domain.job;

/**
 * Which handler runs a job, e.g. {@code word_count}. 1 to 128 characters of
 * {@code [A-Za-z0-9_.:-]} ({@link Identifier}).
 */
public record TaskName(String value) {
    /** @throws IllegalArgumentException if the name breaks {@link Identifier}'s rule */
    public TaskName {
        Identifier.check("task", value);
    }

    public static TaskName of(String value) {
        return new TaskName(value);
    }

    @Override
    public String toString() {
        return value;
    }
}
