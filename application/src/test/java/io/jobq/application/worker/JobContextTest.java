package io.jobq.application.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.JobState;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.lease.Lease;
import io.jobq.domain.lease.WorkerId;
import io.jobq.domain.tenant.TenantId;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.OptionalDouble;
import org.junit.jupiter.api.Test;

class JobContextTest {
    static final ObjectMapper MAPPER = Worker.defaultMapper();

    /** A running job as a claim returns it, for building contexts in handler tests. */
    static Job runningJob(String task, String payload, int attempt, int maxAttempts) {
        Instant t = Instant.parse("2026-01-01T00:00:00Z");
        return new Job(JobId.of(42), TenantId.of("acme"), QueueName.DEFAULT, TaskName.of(task), payload,
                Optional.empty(), JobState.RUNNING, OptionalDouble.of(1), t, attempt, maxAttempts,
                Optional.of(new Lease(WorkerId.of("w-1"), t.plusSeconds(30))), Optional.empty(), Optional.empty(), t,
                Optional.of(t), Optional.empty(), false, 0);
    }

    static JobContext context(String task, String payload, int attempt) {
        try {
            return new JobContext(runningJob(task, payload, attempt, 5), MAPPER.readTree(payload), MAPPER);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    record Resize(String url, int width, List<String> formats) {}

    @Test
    void exposesTheRunsIdentity() {
        JobContext ctx = context("resize", "{}", 2);

        assertThat(ctx.jobId()).isEqualTo(JobId.of(42));
        assertThat(ctx.tenant()).isEqualTo(TenantId.of("acme"));
        assertThat(ctx.queue()).isEqualTo(QueueName.DEFAULT);
        assertThat(ctx.task()).isEqualTo(TaskName.of("resize"));
        assertThat(ctx.attempt()).isEqualTo(2);
        assertThat(ctx.maxAttempts()).isEqualTo(5);
        assertThat(ctx.isLastAttempt()).isFalse();
        assertThat(ctx.token().toString()).isEqualTo("42/w-1#2");
    }

    @Test
    void bindsThePayloadToARecord() {
        JobContext ctx = context("resize", "{\"url\": \"s3://a\", \"width\": 640, \"formats\": [\"webp\"]}", 1);

        assertThat(ctx.payloadAs(Resize.class)).isEqualTo(new Resize("s3://a", 640, List.of("webp")));
    }

    /** Producers may add a field before every consumer knows it; the record binds what it declares. */
    @Test
    void anUnknownFieldIsIgnored() {
        JobContext ctx = context("resize", "{\"url\": \"s3://a\", \"width\": 640, \"colour\": \"red\"}", 1);

        assertThat(ctx.payloadAs(Resize.class)).isEqualTo(new Resize("s3://a", 640, null));
    }

    @Test
    void aRecordsConstructorRefusingThePayloadIsAPermanentFailureNamingTheJob() {
        record Positive(int n) {
            Positive {
                if (n <= 0) throw new IllegalArgumentException("n must be positive, was " + n);
            }
        }
        assertThatThrownBy(() -> context("count", "{\"n\": 0}", 1).payloadAs(Positive.class))
                .isInstanceOf(PermanentJobFailure.class)
                .hasMessageContaining("payload of job 42 (task count) does not bind to Positive")
                .hasMessageContaining("n must be positive, was 0");
    }

    @Test
    void aWrongTypeOrMissingPrimitiveIsAPermanentFailure() {
        assertThatThrownBy(() -> context("resize", "{\"url\": \"s3://a\", \"width\": \"wide\"}", 1).payloadAs(Resize.class))
                .isInstanceOf(PermanentJobFailure.class).hasMessageContaining("width");
        assertThatThrownBy(() -> context("resize", "{\"url\": \"s3://a\", \"width\": null}", 1).payloadAs(Resize.class))
                .isInstanceOf(PermanentJobFailure.class);
    }

    /** Jackson would bind JSON null to a null record; the handler's NPE would then be retried five times. */
    @Test
    void aNullPayloadIsAPermanentFailureNotANullRecord() {
        assertThatThrownBy(() -> context("resize", "null", 1).payloadAs(Resize.class))
                .isInstanceOf(PermanentJobFailure.class).hasMessageContaining("is null").hasMessageContaining("Resize");
    }

    /** Enqueue refuses payload numbers that print longer than JsonNumbers allows; the worker must parse the rest. */
    @Test
    void theWorkersParserAcceptsEveryNumberAPayloadMayHold() {
        assertThat((long) MAPPER.getFactory().streamReadConstraints().getMaxNumberLength())
                .isEqualTo(io.jobq.domain.job.JsonNumbers.MAX_NUMBER_LENGTH);
        assertThat(MAPPER.getFactory().streamReadConstraints().getMaxNestingDepth())
                .isEqualTo(io.jobq.domain.job.JsonNumbers.MAX_NESTING_DEPTH);
    }

    @Test
    void cancellationKeepsTheFirstReason() {
        JobContext ctx = context("resize", "{}", 1);
        assertThat(ctx.isCancelled()).isFalse();

        assertThat(ctx.cancel("lease lost")).isTrue();
        assertThat(ctx.cancel("timed out")).isFalse();

        assertThat(ctx.isCancelled()).isTrue();
        assertThat(ctx.cancellationReason()).hasValue("lease lost");
    }

    @Test
    void aContextNeedsARunningJob() {
        Job running = runningJob("noop", "{}", 1, 5);
        Job queued = new Job(running.id(), running.tenant(), running.queue(), running.task(), "{}", Optional.empty(),
                JobState.QUEUED, OptionalDouble.of(1), running.runAt(), 0, 5, Optional.empty(), Optional.empty(),
                Optional.empty(), running.createdAt(), Optional.empty(), Optional.empty(), false, 0);

        assertThatThrownBy(() -> new JobContext(queued, MAPPER.createObjectNode(), MAPPER))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not running");
    }
}
