package io.jobq.postgres;

import static org.jooq.impl.DSL.val;

import io.jobq.application.port.JobStore;
import org.jooq.DSLContext;
import org.jooq.impl.SQLDataType;

/**
 * Priorities within a tenant, composed with start tags (see {@link io.jobq.application.port.JobStore#enqueue}).
 * Tags say when a tenant's turn comes; priority says which of its jobs takes the turn. After an enqueue of
 * jobs with priority p, {@link #REORDER} takes the tenant's queued jobs from its first one of lower priority
 * than p onwards, and deals their tags out again by (priority, highest first; then their own tag order): the
 * new jobs move ahead of every lower-priority job, stay behind every job of equal or higher priority (older
 * ones of equal priority included), and the tenant's multiset of tags, which is all other tenants see, is
 * unchanged. Rows another transaction holds (a claim in progress, a cancel inside an application's open
 * transaction) are left where they are, neither waited for nor moved, so an enqueue never blocks on them.
 * Cost: one update of the jobs that move, at most {@link JobStore#PRIORITY_REORDER_LIMIT} (found through
 * {@code jobs_runnable}, the queue's queued jobs in tag order, filtered by tenant); jobs without priority pay
 * nothing. With more than that many jobs in the suffix, the jobs beyond the limit are not moved and the
 * suffix's last tag is the greatest one within the limit plus the new jobs' own: the last jobs of the
 * limited suffix take the new jobs' tags at the back (the multiset still holds).
 */
final class TenantPriority {
    /**
     * Binds: {0} queue, {1} tenant, {2} the new jobs' priority, {3} the limit. Runs in a transaction that holds
     * the tenant's row lock (the enqueue's, a promotion's, a retry's), so no other enqueue or release of the
     * tenant interleaves. The tags are pooled in an array and dealt by rank, so the cost is linear in the
     * jobs moved whatever the planner's statistics (a join on rank became a nested loop on a fresh backlog).
     */
    private static final String REORDER = """
            WITH first_lower AS MATERIALIZED (
                SELECT min(vtime) AS tag FROM jobq.jobs
                WHERE queue = {0} AND state = 'queued' AND tenant = {1} AND priority < {2}
            ), head AS MATERIALIZED (
                SELECT id, vtime, priority FROM jobq.jobs
                WHERE queue = {0} AND state = 'queued' AND tenant = {1} AND vtime >= (SELECT tag FROM first_lower)
                ORDER BY vtime, id
                LIMIT {3}
                FOR UPDATE SKIP LOCKED
            ), urgent AS MATERIALIZED (
                -- beyond the limit: the tenant's jobs of priority at least {2} (the new ones among them), at the back
                SELECT id, vtime, priority FROM jobq.jobs
                WHERE queue = {0} AND state = 'queued' AND tenant = {1} AND priority >= {2}
                  AND vtime > (SELECT coalesce(max(vtime), 'Infinity') FROM head)
                FOR UPDATE SKIP LOCKED
            ), suffix AS MATERIALIZED (
                SELECT * FROM head UNION ALL SELECT * FROM urgent
            ), pool AS MATERIALIZED (
                SELECT array_agg(vtime ORDER BY vtime, id) AS tags FROM suffix
            ), holders AS MATERIALIZED (
                SELECT id, vtime, row_number() OVER (ORDER BY priority DESC, vtime, id) AS rank FROM suffix
            )
            UPDATE jobq.jobs j SET vtime = p.tags[h.rank]
            FROM holders h CROSS JOIN pool p
            WHERE j.id = h.id AND h.vtime IS DISTINCT FROM p.tags[h.rank]""";

    private TenantPriority() {}

    /**
     * Reorders the tenant's queued jobs after jobs with {@code priority} (the highest among them) above 0 were
     * queued at its back: by an enqueue, a promotion or a retry.
     */
    static void reorder(DSLContext tx, String queue, String tenant, int priority) {
        if (priority <= 0) return;
        tx.execute(JobqSchema.of(tx).sql(REORDER), queue, tenant, val(priority, SQLDataType.SMALLINT),
                val(JobStore.PRIORITY_REORDER_LIMIT, SQLDataType.INTEGER));
    }
}
