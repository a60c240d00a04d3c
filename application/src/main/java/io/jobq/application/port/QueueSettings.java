package io.jobq.application.port;

import io.jobq.domain.fairness.Fairness;
import io.jobq.domain.job.QueueName;
import java.util.Objects;

/**
 * A queue's settings.
 *
 * @param fairness what the queue charges its tenants for: jobs (the default) or measured run time
 */
public record QueueSettings(QueueName queue, Fairness fairness) {
    public QueueSettings {
        Objects.requireNonNull(queue, "queue");
        Objects.requireNonNull(fairness, "fairness");
    }
}
