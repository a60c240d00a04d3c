package io.jobq.postgres;

import static io.jobq.postgres.schema.Tables.JOBS;

import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.JobState;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.lease.Lease;
import io.jobq.domain.lease.WorkerId;
import io.jobq.domain.tenant.TenantId;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.Optional;
import java.util.OptionalDouble;
import org.jooq.JSONB;
import org.jooq.Record;

/** Maps rows of {@code jobs} (any record carrying its columns) to domain {@link Job}s. */
final class JobRows {
    private JobRows() {}

    static Job toJob(Record r) {
        JobState state = JobState.fromDbName(r.get(JOBS.STATE));
        String lockedBy = r.get(JOBS.LOCKED_BY);
        OffsetDateTime lockedUntil = r.get(JOBS.LOCKED_UNTIL);
        Optional<Lease> lease = lockedBy == null || lockedUntil == null
                ? Optional.empty()
                : Optional.of(new Lease(new WorkerId(lockedBy), lockedUntil.toInstant()));
        Double vtime = r.get(JOBS.VTIME);
        JSONB result = r.get(JOBS.RESULT);
        return new Job(
                new JobId(r.get(JOBS.ID)),
                new TenantId(r.get(JOBS.TENANT)),
                new QueueName(r.get(JOBS.QUEUE)),
                new TaskName(r.get(JOBS.TASK)),
                r.get(JOBS.PAYLOAD).data(),
                Optional.ofNullable(result).map(JSONB::data),
                state,
                vtime == null ? OptionalDouble.empty() : OptionalDouble.of(vtime),
                r.get(JOBS.RUN_AT).toInstant(),
                r.get(JOBS.ATTEMPTS),
                r.get(JOBS.MAX_ATTEMPTS),
                lease,
                Optional.ofNullable(r.get(JOBS.LAST_ERROR)),
                Optional.ofNullable(r.get(JOBS.IDEMPOTENCY_KEY)),
                r.get(JOBS.CREATED_AT).toInstant(),
                instant(r.get(JOBS.STARTED_AT)),
                instant(r.get(JOBS.FINISHED_AT)));
    }

    private static Optional<Instant> instant(OffsetDateTime t) {
        return Optional.ofNullable(t).map(OffsetDateTime::toInstant);
    }
}
