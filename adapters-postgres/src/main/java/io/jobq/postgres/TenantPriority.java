package io.jobq.postgres;

import java.util.List;
import org.jooq.DSLContext;

/**
 * Priorities within a tenant, composed with start tags (see {@link io.jobq.application.port.JobStore#enqueue}).
 * Tags say when a tenant's turn comes; priority says which of its jobs takes the turn. After an enqueue of
 * jobs with priority p, {@link #REORDER} gives them the earliest tags among the tenant's queued jobs of lower
 * priority that are ahead of them, and gives those jobs, in their own order, the tags that remain (the new
 * jobs' own tags last). The tenant's multiset of tags is unchanged, so what other tenants get is exactly what
 * it would be without priority, and equal priorities keep their order. Cost: one update of the displaced
 * jobs, found through {@code jobs_runnable} (the queue's queued jobs in tag order, filtered by tenant); jobs
 * without priority pay nothing.
 */
final class TenantPriority {
    /**
     * Binds: {0} queue, {1} tenant, {2} the new jobs' priority, {3} their ids. Runs in the enqueue's
     * transaction, which holds the tenant's row lock (so no other enqueue of the tenant interleaves); the
     * rows it moves are locked in tag order, as a claim would meet them.
     */
    private static final String REORDER = """
            WITH mine AS MATERIALIZED (
                SELECT id, vtime FROM jobq.jobs WHERE id = ANY({3}::bigint[]) AND state = 'queued'
            ), displaced AS MATERIALIZED (
                SELECT id, vtime FROM jobq.jobs
                WHERE queue = {0} AND state = 'queued' AND tenant = {1} AND priority < {2}
                  AND vtime < (SELECT min(vtime) FROM mine)
                ORDER BY vtime, id
                FOR UPDATE
            ), holders AS (
                SELECT id, row_number() OVER (ORDER BY first, vtime, id) AS rank
                FROM (SELECT id, vtime, 0 AS first FROM mine UNION ALL SELECT id, vtime, 1 FROM displaced) x
            ), tags AS (
                SELECT vtime, row_number() OVER (ORDER BY vtime) AS rank
                FROM (SELECT vtime FROM mine UNION ALL SELECT vtime FROM displaced) y
            )
            UPDATE jobq.jobs j SET vtime = t.vtime
            FROM holders h JOIN tags t ON t.rank = h.rank
            WHERE j.id = h.id AND j.vtime IS DISTINCT FROM t.vtime""";

    private TenantPriority() {}

    /** Reorders after an enqueue of {@code ids} (those still queued) with {@code priority} above 0. */
    static void reorder(DSLContext tx, String queue, String tenant, int priority, List<Long> ids) {
        if (priority == 0 || ids.isEmpty()) return;
        tx.execute(JobqSchema.of(tx).sql(REORDER), queue, tenant, org.jooq.impl.DSL.val(priority, org.jooq.impl.SQLDataType.SMALLINT),
                ids.toArray(Long[]::new));
    }
}
