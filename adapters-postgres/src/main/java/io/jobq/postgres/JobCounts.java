package io.jobq.postgres;

import static org.jooq.impl.DSL.val;

import io.jobq.domain.job.JobState;
import io.jobq.domain.job.QueueName;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.jooq.DSLContext;
import org.jooq.Record;
import org.jooq.impl.SQLDataType;

/**
 * What {@code /stats} and the job gauges count ({@link PostgresJobStore#countsByQueueAndState},
 * {@link PostgresJobStore#oldestRunnableAge}), kept cheap with millions of finished jobs in the table.
 */
final class JobCounts {
    private JobCounts() {}

    /**
     * Live states, exact: each branch's WHERE matches one partial index (jobs_due, jobs_runnable,
     * jobs_leases), so the cost grows with the live jobs, not with the finished ones piling up.
     */
    private static final String LIVE_COUNTS = """
            SELECT queue, 'scheduled' AS state, count(*) FROM jobq.jobs WHERE state = 'scheduled' GROUP BY queue
            UNION ALL
            SELECT queue, 'queued', count(*) FROM jobq.jobs WHERE state = 'queued' GROUP BY queue
            UNION ALL
            SELECT queue, 'held', count(*) FROM jobq.jobs WHERE state = 'held' GROUP BY queue
            UNION ALL
            SELECT queue, 'running', count(*) FROM jobq.jobs WHERE state = 'running' GROUP BY queue""";

    /** Up to this many heap pages (8 MB, roughly 50,000-100,000 jobs) done and dead are counted exactly. */
    static final long EXACT_TERMINAL_MAX_PAGES = 1_000;
    /** Above that, done and dead are estimated from a block sample of about this many pages. */
    static final long SAMPLE_PAGES = 500;

    /**
     * done, dead and cancelled have no index (they are most of the table), so counting them exactly is a full scan:
     * about 300 ms at 1,000,000 rows, measured. On a large table they are estimated instead from a
     * TABLESAMPLE SYSTEM block sample of about {@value #SAMPLE_PAGES} pages: each (queue, state)'s share
     * of the sampled rows times the table's row count as the planner estimates it (rows per page from the
     * last ANALYZE times the current page count). Scaling by the share rather than by 100 / percent
     * cancels the luck of how many pages the sample happened to pick. REPEATABLE keeps the same pages
     * from one scrape to the next, so the gauge does not jitter.
     */
    private static final String TERMINAL_EXACT = """
            SELECT queue, state, count(*) FROM jobq.jobs WHERE state IN ('done', 'dead', 'cancelled') GROUP BY queue, state""";
    private static final String TERMINAL_SAMPLED = """
            SELECT queue, state, n, sum(n) OVER () AS sampled
            FROM (SELECT queue, state, count(*) AS n FROM jobq.jobs TABLESAMPLE SYSTEM ({0}) REPEATABLE (7)
                  GROUP BY queue, state) g""";
    /** The current size in pages (pg_class.relpages is stale until the next VACUUM/ANALYZE) and the last ANALYZE's density. */
    private static final String TABLE_SIZE = """
            SELECT pg_relation_size(c.oid) / current_setting('block_size')::bigint, c.reltuples::float8, c.relpages::bigint
            FROM pg_class c WHERE c.oid = 'jobq.jobs'::regclass""";

    /** The states that end a job: counted exactly on a small table, estimated from a sample on a large one. */
    private static final Set<String> TERMINAL = Set.of(JobState.DONE.dbName(), JobState.DEAD.dbName(), JobState.CANCELLED.dbName());

    /** Live jobs (scheduled, queued, held, running) per queue and state, exact, from the partial indexes alone. */
    static Map<QueueName, Map<JobState, Long>> live(DSLContext dsl) {
        Map<QueueName, Map<JobState, Long>> out = new TreeMap<>(java.util.Comparator.comparing(QueueName::value));
        for (Record r : dsl.resultQuery(JobqSchema.of(dsl).sql(LIVE_COUNTS))) {
            put(out, r.get(0, String.class), r.get(1, String.class), r.get(2, Long.class));
        }
        return out;
    }

    /** Jobs per queue and state: live states exact, finished ones exact or sampled as above. */
    static Map<QueueName, Map<JobState, Long>> byQueueAndState(DSLContext dsl) {
        JobqSchema schema = JobqSchema.of(dsl);
        Map<QueueName, Map<JobState, Long>> out = live(dsl);
        Record size = dsl.resultQuery(schema.sql(TABLE_SIZE)).fetchSingle();
        long pages = size.get(0, Long.class);
        if (pages <= EXACT_TERMINAL_MAX_PAGES) {
            for (Record r : dsl.resultQuery(schema.sql(TERMINAL_EXACT))) put(out, r.get(0, String.class), r.get(1, String.class), r.get(2, Long.class));
            return out;
        }
        double percent = Math.min(100.0, 100.0 * SAMPLE_PAGES / pages);
        double reltuples = size.get(1, Double.class);
        long relpages = size.get(2, Long.class);
        for (Record r : dsl.resultQuery(schema.sql(TERMINAL_SAMPLED), val(percent, SQLDataType.DOUBLE))) {
            String state = r.get(1, String.class);
            if (!TERMINAL.contains(state)) continue;
            double n = r.get(2, Double.class);
            double sampled = r.get(3, Double.class);
            // never analyzed: fall back to scaling by the sampling rate
            double estimate = relpages > 0 && reltuples > 0
                    ? n / sampled * (reltuples / relpages * pages)
                    : n * 100.0 / percent;
            put(out, r.get(0, String.class), state, Math.round(estimate));
        }
        return out;
    }

    private static void put(Map<QueueName, Map<JobState, Long>> out, String queue, String state, long n) {
        // storedName: a queue named before schema V2 made names a constraint still counts, under its stand-in
        if (n > 0) {
            out.computeIfAbsent(new QueueName(JobRows.storedName(queue)), k -> new LinkedHashMap<>())
                    .merge(JobState.fromDbName(state), n, Long::sum);
        }
    }

    /**
     * A run_at of -infinity or infinity (written by hand: PostgreSQL takes them) has no age, and PostgreSQL
     * 15 and 16 refuse to subtract it ("cannot subtract infinite timestamps"), which failed every scrape's
     * refresh: such jobs are left out, and a queue holding only those shows 0.
     */
    private static final String OLDEST_RUNNABLE = """
            SELECT queue, coalesce(extract(epoch FROM now() - min(run_at) FILTER (WHERE isfinite(run_at))) * 1000, 0) AS age_ms
            FROM jobq.jobs WHERE state = 'queued' GROUP BY queue""";

    /** Per queue, how long its oldest queued job has been runnable (database clock). */
    static Map<QueueName, Duration> oldestRunnableAge(DSLContext dsl) {
        JobqSchema schema = JobqSchema.of(dsl);
        Map<QueueName, Duration> out = new TreeMap<>(java.util.Comparator.comparing(QueueName::value));
        for (Record r : dsl.resultQuery(schema.sql(OLDEST_RUNNABLE))) {
            out.merge(new QueueName(JobRows.storedName(r.get(0, String.class))),
                    Duration.ofMillis(Math.max(0, r.get(1, Double.class).longValue())), (a, b) -> a.compareTo(b) >= 0 ? a : b);
        }
        return out;
    }
}
