package io.jobq.application.worker;

import io.jobq.domain.job.Job;
import org.slf4j.spi.LoggingEventBuilder;

/** The structured fields every log line about one job carries. */
final class JobLogFields {
    private JobLogFields() {}

    /**
     * Adds the job's identity and retry fields to {@code event}. Only these: payloads may hold personal
     * data and never go to logs.
     */
    static LoggingEventBuilder of(LoggingEventBuilder event, Job job) {
        return event.addKeyValue("job", job.id()).addKeyValue("tenant", job.tenant())
                .addKeyValue("queue", job.queue()).addKeyValue("task", job.task())
                .addKeyValue("attempt", job.attempts()).addKeyValue("maxAttempts", job.maxAttempts());
    }
}
