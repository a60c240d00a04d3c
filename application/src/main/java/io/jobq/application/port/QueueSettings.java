package io.jobq.application.port;

import io.jobq.domain.fairness.Fairness;
import io.jobq.domain.job.QueueName;
import java.util.Objects;

/**
 * A queue's settings.
 *
 * @param fairness what the queue charges its tenants for: jobs (the default) or measured run time
 * @param retention how long its finished jobs are kept
 */
public record QueueSettings(QueueName queue, Fairness fairness, Retention retention) {
    public QueueSettings {
        Objects.requireNonNull(queue, "queue");
        Objects.requireNonNull(fairness, "fairness");
        Objects.requireNonNull(retention, "retention");
    }

    /** A queue nobody configured. */
    public static QueueSettings defaults(QueueName queue) {
        return new QueueSettings(queue, Fairness.JOBS, Retention.DEFAULT);
    }
}
