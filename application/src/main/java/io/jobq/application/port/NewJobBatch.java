package io.jobq.application.port;

import io.jobq.domain.job.JobLimits;
import io.jobq.domain.job.JsonNumbers;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.StoredText;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.tenant.TenantId;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * Up to 1,000 jobs of one tenant, queue and task, enqueued by one INSERT. Their vtimes are
 * consecutive start tags of the tenant, in list order.
 *
 * @param payloads 1..1,000 JSON texts, each as in {@link NewJob#payload()}
 * @param maxAttempts 1..100, as in {@link NewJob} ({@link JobLimits})
 * @param delay 0..365 days, as in {@link NewJob} ({@link JobLimits})
 * @param priority 0..9, as in {@link NewJob}, for every job of the batch
 */
public record NewJobBatch(
        TenantId tenant, QueueName queue, TaskName task, List<String> payloads, int maxAttempts, Duration delay,
        int priority) {
    /** Most payloads in one batch. */
    public static final int MAX_SIZE = 1000;

    /** @throws IllegalArgumentException naming the field that is out of range */
    public NewJobBatch {
        Objects.requireNonNull(tenant, "tenant");
        Objects.requireNonNull(queue, "queue");
        Objects.requireNonNull(task, "task");
        Objects.requireNonNull(delay, "delay");
        payloads = List.copyOf(payloads);
        if (payloads.isEmpty() || payloads.size() > MAX_SIZE) {
            throw new IllegalArgumentException("payloads must hold 1-" + MAX_SIZE + " items, had " + payloads.size());
        }
        for (int i = 0; i < payloads.size(); i++) {
            StoredText.requireStorable("payloads[" + i + "]", payloads.get(i));
            JsonNumbers.requireReadableBack("payloads[" + i + "]", payloads.get(i));
        }
        JobLimits.requireMaxAttempts(maxAttempts);
        JobLimits.requireDelay(delay);
        JobLimits.requirePriority(priority);
    }

    /** A batch of priority 0. */
    public NewJobBatch(TenantId tenant, QueueName queue, TaskName task, List<String> payloads, int maxAttempts, Duration delay) {
        this(tenant, queue, task, payloads, maxAttempts, delay, 0);
    }
}
