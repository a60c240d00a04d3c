package io.jobq.postgres;

import static io.jobq.postgres.schema.Tables.SCHEDULES;
import static org.jooq.impl.DSL.val;

import io.jobq.application.port.NewJob;
import io.jobq.application.port.Schedule;
import io.jobq.application.port.ScheduleDefinition;
import io.jobq.application.port.JobStore;
import io.jobq.application.port.ScheduleStore.SchedulePage;
import io.jobq.application.port.ScheduleStore.ScheduleTimings;
import io.jobq.application.port.ScheduleStore.ScheduleWrite;
import io.jobq.application.port.ScheduleTiming;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.schedule.ScheduleName;
import io.jobq.domain.tenant.TenantId;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import org.jooq.Cursor;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Record;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

/**
 * The {@code schedules} and {@code schedule_ticks} tables (schema V9). Firing a tick is one transaction
 * that moves {@code last_tick} forward only, enqueues the job as {@link Enqueuer} does, and inserts
 * (schedule, tick), whose primary key refuses the same tick twice whatever else went wrong.
 */
final class ScheduleTable {
    private static final String COLUMNS = """
            name, cron, timezone, tenant, queue, task, payload::text, max_attempts, revision, created_at, updated_at,
            last_tick, last_job""";

    /**
     * How {@link #COLUMNS} are read: as the generated table's fields, so the timestamps go through
     * {@link TimestamptzBinding} (jOOQ's own parse of an {@code infinity} written by hand failed every read
     * of the table, and so every schedule's firing); the payload as text.
     */
    private static final Field<?>[] READ = {SCHEDULES.NAME, SCHEDULES.CRON, SCHEDULES.TIMEZONE, SCHEDULES.TENANT,
            SCHEDULES.QUEUE, SCHEDULES.TASK, DSL.field(DSL.name("payload"), SQLDataType.CLOB), SCHEDULES.MAX_ATTEMPTS,
            SCHEDULES.REVISION, SCHEDULES.CREATED_AT, SCHEDULES.UPDATED_AT, SCHEDULES.LAST_TICK, SCHEDULES.LAST_JOB};

    /**
     * {@code xmax = 0} only on a row this statement inserted: created, not replaced. A replaced schedule keeps
     * its last tick, so the tick in progress does not fire again, except one in the future (a hand edit, a
     * database clock set back), which would hold its ticks back until then: that is brought back to now.
     */
    private static final String PUT = """
            INSERT INTO jobq.schedules AS s (name, cron, timezone, tenant, queue, task, payload, max_attempts, revision)
            VALUES ({0}, {1}, {2}, {3}, {4}, {5}, {6}::jsonb, {7}, nextval('jobq.schedule_revisions'))
            ON CONFLICT (name) DO UPDATE SET cron = excluded.cron, timezone = excluded.timezone, tenant = excluded.tenant,
                queue = excluded.queue, task = excluded.task, payload = excluded.payload,
                max_attempts = excluded.max_attempts, revision = excluded.revision, updated_at = now(),
                last_tick = least(s.last_tick, now())
            RETURNING %s, (s.xmax = 0) AS created""".formatted(COLUMNS);

    private static final String GET = "SELECT %s FROM jobq.schedules WHERE name = {0}".formatted(COLUMNS);
    private static final String PAGE = "SELECT %s FROM jobq.schedules WHERE name > {0} ORDER BY name LIMIT {1}".formatted(COLUMNS);
    /**
     * Rows a page's cursor fetches at a time: a schedule's payload is at most about 2 MiB as PostgreSQL prints
     * it (the table's check), so a fetch holds some 32 MiB at worst, and rows past the page's budget never come.
     */
    private static final int PAGE_FETCH = 16;
    private static final String DELETE = "DELETE FROM jobq.schedules WHERE name = {0}";

    /** A page of timings: the firer's read, without the payloads (see {@link ScheduleTiming}). */
    private static final String TIMINGS = """
            SELECT name, cron, timezone, revision, updated_at, last_tick FROM jobq.schedules
            WHERE name > {0} ORDER BY name LIMIT {1}""";
    /** How {@link #TIMINGS} is read: the timestamps through {@link TimestamptzBinding}, as {@link #READ}'s. */
    private static final Field<?>[] READ_TIMINGS = {SCHEDULES.NAME, SCHEDULES.CRON, SCHEDULES.TIMEZONE, SCHEDULES.REVISION,
            SCHEDULES.UPDATED_AT, SCHEDULES.LAST_TICK};

    /** Claims the tick: only at the revision read, only forward, only after the last change. */
    private static final String ADVANCE = """
            UPDATE jobq.schedules SET last_tick = {2}
            WHERE name = {0} AND revision = {1} AND (last_tick IS NULL OR last_tick < {2}) AND updated_at < {2}
            RETURNING tenant, queue, task, payload::text, max_attempts""";

    /** Records the fired tick (its primary key is the exclusion), forgets ticks an hour older, links the job. */
    private static final String RECORD = """
            WITH fired AS (
                INSERT INTO jobq.schedule_ticks (schedule, tick, job_id) VALUES ({0}, {1}, {2})
            ), forgotten AS (
                DELETE FROM jobq.schedule_ticks WHERE schedule = {0} AND tick < {1} - interval '1 hour'
            )
            UPDATE jobq.schedules SET last_job = {2} WHERE name = {0}""";

    private static final Field<Boolean> CREATED = DSL.field(DSL.name("created"), SQLDataType.BOOLEAN);

    private ScheduleTable() {}

    private static Field<?>[] readWith(Field<?> extra) {
        Field<?>[] fields = Arrays.copyOf(READ, READ.length + 1);
        fields[READ.length] = extra;
        return fields;
    }

    /** @throws IllegalArgumentException if PostgreSQL refuses the payload (as an enqueue would) */
    static ScheduleWrite put(DSLContext dsl, ScheduleDefinition d) {
        NewJob job = d.job();
        try {
            Record r = dsl.resultQuery(JobqSchema.of(dsl).sql(PUT), d.name().value(), d.cron().expression(),
                    d.cron().zone().getId(), job.tenant().value(), job.queue().value(), job.task().value(), job.payload(),
                    val(job.maxAttempts(), SQLDataType.INTEGER)).coerce(readWith(CREATED)).fetchOne();
            return new ScheduleWrite(toSchedule(r), r.get(CREATED));
        } catch (DataAccessException e) {
            String state = StoreErrors.sqlState(e);
            // not JSON, \u0000, numeric out of range, jsonb limits, or schedules_payload_readable (23514)
            if ("22P02".equals(state) || "22P05".equals(state) || "22003".equals(state) || "54000".equals(state)
                    || "54001".equals(state) || "23514".equals(state)) {
                throw new IllegalArgumentException("payload is not storable JSON: " + StoreErrors.serverMessage(e), e);
            }
            throw e;
        }
    }

    static Optional<Schedule> get(DSLContext dsl, ScheduleName name) {
        return dsl.resultQuery(JobqSchema.of(dsl).sql(GET), name.value()).coerce(READ).fetchOptional().flatMap(ScheduleTable::readable);
    }

    /** See {@link io.jobq.application.port.ScheduleStore#schedules}: read through a cursor, in a transaction of its own. */
    static SchedulePage page(DSLContext dsl, String after, int limit) {
        return dsl.transactionResult(cfg -> {
            try (Cursor<Record> rows = cfg.dsl().resultQuery(JobqSchema.of(cfg.dsl()).sql(PAGE), after, val(limit, SQLDataType.INTEGER))
                    .coerce(READ).fetchSize(PAGE_FETCH).fetchLazy()) {
                List<Schedule> page = new ArrayList<>();
                long chars = 0;
                int read = 0;
                String last = null;
                for (Record r : rows) {
                    Optional<Schedule> s = readable(r);
                    if (s.isPresent()) {
                        chars += s.get().job().payload().length();
                        // the row that passes the budget starts the next page: the cursor is the row before it
                        if (!page.isEmpty() && chars > JobStore.LIST_PAGE_CHARS) return new SchedulePage(page, Optional.of(last));
                        page.add(s.get());
                    }
                    read++;
                    last = r.get(SCHEDULES.NAME); // readable or not, so the next page starts after it
                }
                return new SchedulePage(page, read == limit ? Optional.of(last) : Optional.empty());
            }
        });
    }

    static ScheduleTimings timings(DSLContext dsl, String after, int limit) {
        List<ScheduleTiming> out = new ArrayList<>();
        String last = null;
        int read = 0;
        for (Record r : dsl.resultQuery(JobqSchema.of(dsl).sql(TIMINGS), after, val(limit, SQLDataType.INTEGER)).coerce(READ_TIMINGS)) {
            read++;
            last = r.get(SCHEDULES.NAME); // counted readable or not, so the next page starts after it
            readable(r, ScheduleTable::toTiming).ifPresent(out::add);
        }
        return new ScheduleTimings(out, read == limit ? Optional.of(last) : Optional.empty());
    }

    static boolean delete(DSLContext dsl, ScheduleName name) {
        return dsl.execute(JobqSchema.of(dsl).sql(DELETE), name.value()) > 0;
    }

    /**
     * Fires one tick on {@code tx}, which must be a transaction of its own: a duplicate tick raises a
     * unique violation (23505) that aborts it, enqueue included.
     */
    static Optional<JobId> fire(DSLContext tx, ScheduleName name, long revision, Instant tick) {
        OffsetDateTime at = tick.atOffset(ZoneOffset.UTC);
        Record r = tx.resultQuery(JobqSchema.of(tx).sql(ADVANCE), name.value(), val(revision, SQLDataType.BIGINT),
                val(at, SQLDataType.TIMESTAMPWITHTIMEZONE)).fetchOne();
        if (r == null) return Optional.empty();
        // Checked as any enqueue's job is: the table takes payloads jobq will not read back (numbers printing to
        // 1-2 MiB, written by hand), which a job would carry to a claim only to be quarantined there. The firer
        // reads no payloads, so this is where such a schedule is refused; the transaction, tick included, rolls back.
        NewJob job = new NewJob(TenantId.of(r.get(0, String.class)), QueueName.of(r.get(1, String.class)),
                TaskName.of(r.get(2, String.class)), r.get(3, String.class), r.get(4, Integer.class), Duration.ZERO, Optional.empty());
        List<Job> jobs = Enqueuer.insert(tx, job.tenant(), job.queue(), job.task(), List.of(job.payload()), job.maxAttempts(),
                Duration.ZERO, Optional.empty(), 0);
        JobId id = jobs.getFirst().id();
        tx.execute(JobqSchema.of(tx).sql(RECORD), name.value(), val(at, SQLDataType.TIMESTAMPWITHTIMEZONE),
                val(id.value(), SQLDataType.BIGINT));
        return Optional.of(id);
    }

    /** Whether {@code e} is the unique violation of a tick fired twice. */
    static boolean isTickFiredTwice(Throwable e) {
        return "23505".equals(StoreErrors.sqlState(e)) && "schedule_ticks_pkey".equals(StoreErrors.constraintName(e));
    }

    /** Rows a hand edit made unreadable (a name the domain refuses) are left out rather than failing the read. */
    private static Optional<Schedule> readable(Record r) {
        return readable(r, ScheduleTable::toSchedule);
    }

    /** {@code read} of the row, or empty when the domain refuses one of its values (a row written by hand): left out. */
    private static <T> Optional<T> readable(Record r, Function<Record, T> read) {
        try {
            return Optional.of(read.apply(r));
        } catch (RuntimeException unreadable) {
            return Optional.empty();
        }
    }

    private static ScheduleTiming toTiming(Record r) {
        return new ScheduleTiming(ScheduleName.of(r.get(SCHEDULES.NAME)), r.get(SCHEDULES.CRON), r.get(SCHEDULES.TIMEZONE),
                r.get(SCHEDULES.REVISION), r.get(SCHEDULES.UPDATED_AT).toInstant(),
                Optional.ofNullable(r.get(SCHEDULES.LAST_TICK)).map(OffsetDateTime::toInstant));
    }

    private static Schedule toSchedule(Record r) {
        NewJob job = new NewJob(TenantId.of(r.get(3, String.class)), QueueName.of(r.get(4, String.class)),
                TaskName.of(r.get(5, String.class)), r.get(6, String.class), r.get(7, Integer.class), Duration.ZERO,
                Optional.empty());
        return new Schedule(ScheduleName.of(r.get(0, String.class)), r.get(1, String.class), r.get(2, String.class), job,
                r.get(8, Long.class), r.get(9, OffsetDateTime.class).toInstant(), r.get(10, OffsetDateTime.class).toInstant(),
                Optional.ofNullable(r.get(11, OffsetDateTime.class)).map(OffsetDateTime::toInstant),
                Optional.ofNullable(r.get(12, Long.class)).map(JobId::new));
    }
}
