package io.jobq.postgres;

import io.jobq.application.port.FinishedCount;
import io.jobq.application.port.TenantActivity;
import io.jobq.domain.fairness.MaxRunning;
import io.jobq.domain.fairness.TenantWeight;
import io.jobq.domain.job.JobState;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.tenant.TenantId;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.jooq.DSLContext;
import org.jooq.Record;

/**
 * What a dashboard reads about recent and live work ({@link PostgresJobStore#tenantActivity},
 * {@link PostgresJobStore#finishedPerMinute}), each on partial indexes so that millions of finished jobs in
 * the table cost nothing.
 */
final class ActivityReads {
    private ActivityReads() {}

    /**
     * Live jobs per tenant: one branch per state, each matching one partial index (jobs_runnable_fifo,
     * jobs_held_by_priority, jobs_leases), as {@link JobCounts} counts them, so finished jobs are never read (a
     * single {@code state IN (...)} matches no partial index and scans the table). {1} is NULL for every tenant.
     */
    private static final String TENANTS = """
            SELECT t.queue, t.tenant, t.weight, t.max_running,
                   coalesce(j.queued, 0), coalesce(j.held, 0), coalesce(j.running, 0)
            FROM jobq.tenants t
            LEFT JOIN (SELECT queue, tenant, sum(queued) AS queued, sum(held) AS held, sum(running) AS running
                       FROM (SELECT queue, tenant, count(*) AS queued, 0 AS held, 0 AS running FROM jobq.jobs
                             WHERE state = 'queued' AND ({1}::varchar IS NULL OR tenant = {1}::varchar) GROUP BY queue, tenant
                             UNION ALL
                             SELECT queue, tenant, 0, count(*), 0 FROM jobq.jobs
                             WHERE state = 'held' AND ({1}::varchar IS NULL OR tenant = {1}::varchar) GROUP BY queue, tenant
                             UNION ALL
                             SELECT queue, tenant, 0, 0, count(*) FROM jobq.jobs
                             WHERE state = 'running' AND ({1}::varchar IS NULL OR tenant = {1}::varchar) GROUP BY queue, tenant) live
                       GROUP BY queue, tenant) j ON j.queue = t.queue AND j.tenant = t.tenant
            WHERE {1}::varchar IS NULL OR t.tenant = {1}::varchar
            ORDER BY coalesce(j.queued, 0) + coalesce(j.held, 0) + coalesce(j.running, 0) DESC, t.queue, t.tenant
            LIMIT {0}""";

    /**
     * Finished jobs per minute: one range scan of jobs_finished (queue, state, finished_at) per queue and final
     * state, since the index leads with both; the queues come from the small tenants table. The
     * {@code state IN (...)} repeats the index's predicate so that the planner may use it at all. A finished_at
     * of infinity (written by hand) has no minute: left out, or its minute would fail the read.
     */
    private static final String FINISHED = """
            SELECT f.minute, q.queue, f.state, f.n
            FROM (SELECT DISTINCT queue FROM jobq.tenants) q
            CROSS JOIN (VALUES ('done'), ('dead'), ('cancelled')) s(state)
            CROSS JOIN LATERAL (
                SELECT date_trunc('minute', finished_at) AS minute, state, count(*) AS n
                FROM jobq.jobs
                WHERE queue = q.queue AND state = s.state AND state IN ('done', 'dead', 'cancelled')
                  AND finished_at >= date_trunc('minute', now()) - make_interval(mins => {0}) AND isfinite(finished_at)
                  AND ({1}::varchar IS NULL OR tenant = {1}::varchar)
                GROUP BY 1, 2) f
            ORDER BY f.minute, q.queue, f.state""";

    static List<TenantActivity> tenants(DSLContext dsl, Optional<TenantId> tenant, int limit) {
        List<TenantActivity> out = new ArrayList<>();
        for (Record r : dsl.resultQuery(JobqSchema.of(dsl).sql(TENANTS), limit, tenant.map(TenantId::value).orElse(null))) {
            Integer max = r.get(3, Integer.class);
            out.add(new TenantActivity(new QueueName(JobRows.storedName(r.get(0, String.class))),
                    new TenantId(JobRows.storedName(r.get(1, String.class))), new TenantWeight(r.get(2, Double.class)),
                    Optional.ofNullable(max).map(MaxRunning::new), r.get(4, Long.class), r.get(5, Long.class), r.get(6, Long.class)));
        }
        return out;
    }

    static List<FinishedCount> finished(DSLContext dsl, Optional<TenantId> tenant, int minutes) {
        List<FinishedCount> out = new ArrayList<>();
        for (Record r : dsl.resultQuery(JobqSchema.of(dsl).sql(FINISHED), minutes, tenant.map(TenantId::value).orElse(null))) {
            out.add(new FinishedCount(r.get(0, OffsetDateTime.class).toInstant(), new QueueName(JobRows.storedName(r.get(1, String.class))),
                    JobState.fromDbName(r.get(2, String.class)), r.get(3, Long.class)));
        }
        return out;
    }
}
