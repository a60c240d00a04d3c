package io.jobq.domain.job;

/**
 * A named queue. Workers serve a list of queues; fairness between tenants is computed per queue.
 * 1 to 128 characters of {@code [A-Za-z0-9_.:-]} ({@link Identifier}).
 */
public record QueueName(String value) {
    /** The queue used when a request names none. */
    public static final QueueName DEFAULT = new QueueName("default");

    /** @throws IllegalArgumentException if the name breaks {@link Identifier}'s rule */
    public QueueName {
        Identifier.check("queue", value);
    }

    public static QueueName of(String value) {
        return new QueueName(value);
    }

    @Override
    public String toString() {
        return value;
    }
}
