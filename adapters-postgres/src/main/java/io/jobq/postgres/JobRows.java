package io.jobq.postgres;

import static io.jobq.postgres.schema.Tables.JOBS;

import io.jobq.domain.job.Identifier;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.JobLimits;
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
import java.util.function.UnaryOperator;
import org.jooq.Field;
import org.jooq.JSONB;
import org.jooq.Record;

/**
 * Maps rows of {@code jobs} (any record carrying its columns) to domain {@link Job}s, in two ways:
 *
 * <ul>
 *   <li>{@link #toJob} is strict: a stored value the domain refuses (a task named {@code bad task})
 *       throws. The claim uses it, so that a row it could not hand to a worker is quarantined instead of run.
 *   <li>{@link #toJobLenient} never fails on a stored name: reads (GET /jobs, stats) must show every row
 *       the schema let in, including rows written before schema V2 made names a constraint, or into a
 *       database whose constraints were dropped. A name that breaks {@link Identifier}'s rule is shown
 *       as a stand-in that keeps it ({@link #storedName}).
 * </ul>
 */
final class JobRows {
    /** Prefix of a stand-in for a stored name that breaks the rule; {@code :} keeps the stand-in a valid name. */
    static final String INVALID_NAME_PREFIX = "invalid:";

    private JobRows() {}

    /**
     * A row's columns, however it was read: a jOOQ {@link Record} ({@code record::get}) or a {@link JobRow}
     * read straight from the driver. One mapping for both, so the two ways of reading cannot map differently.
     */
    @FunctionalInterface
    interface Columns {
        /** The value of {@code column}, a field of {@code JOBS}; null for SQL NULL. */
        <T> T get(Field<T> column);
    }

    /**
     * @throws IllegalArgumentException naming the field when a stored value breaks a domain rule, e.g.
     *     {@code task must be 1-128 characters of [A-Za-z0-9_.:-], was "bad task"}
     */
    static Job toJob(Record r) {
        return map(r::get, UnaryOperator.identity());
    }

    /** As {@link #toJob(Record)}, for a row read by any means. */
    static Job toJob(Columns r) {
        return map(r, UnaryOperator.identity());
    }

    /** As {@link #toJob}, but a stored task, tenant or queue that is not a valid name becomes its {@link #storedName}. */
    static Job toJobLenient(Record r) {
        return map(r::get, JobRows::storedName);
    }

    /** As {@link #toJobLenient(Record)}, for a row read by any means. */
    static Job toJobLenient(Columns r) {
        return map(r, JobRows::storedName);
    }

    /**
     * A stored name as reads show it: unchanged when valid, else {@value #INVALID_NAME_PREFIX} followed by
     * the name with every character outside {@code [A-Za-z0-9_.:-]} replaced by {@code _}, cut to fit 128
     * characters: {@code bad task} is shown as {@code invalid:bad_task}. Never equal to a real name unless
     * one was chosen to look like it; reads only, never written back.
     */
    static String storedName(String stored) {
        if (Identifier.isValid(stored)) return stored;
        StringBuilder out = new StringBuilder(INVALID_NAME_PREFIX);
        stored.codePoints().limit(Identifier.MAX_LENGTH - INVALID_NAME_PREFIX.length()).forEach(cp -> {
            out.append(Identifier.inAlphabet(cp) ? (char) cp : '_');
        });
        return out.toString();
    }

    private static Job map(Columns r, UnaryOperator<String> names) {
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
                new TenantId(names.apply(r.get(JOBS.TENANT))),
                new QueueName(names.apply(r.get(JOBS.QUEUE))),
                new TaskName(names.apply(r.get(JOBS.TASK))),
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
                instant(r.get(JOBS.FINISHED_AT)),
                Boolean.TRUE.equals(r.get(JOBS.CANCEL_REQUESTED)),
                // the schema's CHECK keeps it in range; clamped so that no row can make a read fail
                Math.clamp(r.get(JOBS.PRIORITY), 0, JobLimits.MAX_PRIORITY));
    }

    private static Optional<Instant> instant(OffsetDateTime t) {
        return Optional.ofNullable(t).map(OffsetDateTime::toInstant);
    }
}
