package io.jobq.postgres;

import static io.jobq.postgres.schema.Tables.WORKERS;
import static org.jooq.impl.DSL.val;

import io.jobq.application.port.WorkerInfo;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.lease.WorkerId;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Record;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

/** The {@code workers} table (schema V8): who is alive and what each runs. */
final class WorkerRegistry {
    private static final String ALIVE = """
            WITH forgotten AS (DELETE FROM jobq.workers WHERE last_seen < now() - interval '1 day')
            INSERT INTO jobq.workers AS w (id, queues, tasks, beat_ms) VALUES ({0}, {1}::text[], {2}::text[], {3})
            ON CONFLICT (id) DO UPDATE SET queues = excluded.queues, tasks = excluded.tasks, beat_ms = excluded.beat_ms,
                                           last_seen = now()""";

    private static final String GONE = "DELETE FROM jobq.workers WHERE id = {0}";

    /** Live: heard from within three of its own periods. Running jobs by lock owner, through jobs_leases. */
    private static final String LIVE = """
            SELECT w.id, w.queues, w.tasks, w.started_at, w.last_seen,
                   (SELECT count(*) FROM jobq.jobs j WHERE j.state = 'running' AND j.locked_by = w.id) AS running
            FROM jobq.workers w
            WHERE w.last_seen > now() - 3 * w.beat_ms * interval '1 millisecond'
            ORDER BY w.id""";

    /** The columns LIVE returns, the times read through {@link TimestamptzBinding} (an {@code infinity} failed the read). */
    private static final Field<?>[] LIVE_READ = {WORKERS.ID, WORKERS.QUEUES, WORKERS.TASKS, WORKERS.STARTED_AT, WORKERS.LAST_SEEN,
            DSL.field(DSL.name("running"), SQLDataType.BIGINT)};

    private WorkerRegistry() {}

    static void alive(DSLContext dsl, WorkerId id, Collection<QueueName> queues, Collection<TaskName> tasks, Duration beat) {
        dsl.execute(JobqSchema.of(dsl).sql(ALIVE), id.value(), queues.stream().map(QueueName::value).sorted().toArray(String[]::new),
                tasks.stream().map(TaskName::value).sorted().toArray(String[]::new),
                val(Math.max(1, Math.min(86_400_000L, beat.toMillis())), SQLDataType.BIGINT));
    }

    static void gone(DSLContext dsl, WorkerId id) {
        dsl.execute(JobqSchema.of(dsl).sql(GONE), id.value());
    }

    /** Rows a hand edit made unreadable (a name the domain refuses) are left out, not fatal to the list. */
    static List<WorkerInfo> live(DSLContext dsl) {
        List<WorkerInfo> out = new ArrayList<>();
        for (Record r : dsl.resultQuery(JobqSchema.of(dsl).sql(LIVE)).coerce(LIVE_READ)) {
            try {
                out.add(new WorkerInfo(new WorkerId(r.get(0, String.class)),
                        Arrays.stream(r.get(1, String[].class)).map(QueueName::new).toList(),
                        Arrays.stream(r.get(2, String[].class)).map(TaskName::new).toList(),
                        r.get(3, OffsetDateTime.class).toInstant(), r.get(4, OffsetDateTime.class).toInstant(), r.get(5, Long.class)));
            } catch (RuntimeException unreadable) {
                // skipped: the worker rewrites its row at its next beat
            }
        }
        return out;
    }
}
