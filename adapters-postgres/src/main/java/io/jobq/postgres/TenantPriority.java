package io.jobq.postgres;

import static org.jooq.impl.DSL.val;

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
 * Cost: one update of the jobs that move, found through {@code jobs_runnable} (the queue's queued jobs in
 * tag order, filtered by tenant); jobs without priority pay nothing.
 */
final class TenantPriority {
    /**
     * Binds: {0} queue, {1} tenant, {2} the new jobs' priority. Runs in the enqueue's transaction, which holds
     * the tenant's row lock, so no other enqueue or release of the tenant interleaves.
     */
    private static final String REORDER = """
            WITH first_lower AS MATERIALIZED (
                SELECT min(vtime) AS tag FROM jobq.jobs
                WHERE queue = {0} AND state = 'queued' AND tenant = {1} AND priority < {2}
            ), suffix AS MATERIALIZED (
                SELECT id, vtime, priority FROM jobq.jobs
                WHERE queue = {0} AND state = 'queued' AND tenant = {1} AND vtime >= (SELECT tag FROM first_lower)
                ORDER BY vtime, id
                FOR UPDATE SKIP LOCKED
            ), holders AS (
                SELECT id, row_number() OVER (ORDER BY priority DESC, vtime, id) AS rank FROM suffix
            ), tags AS (
                SELECT vtime, row_number() OVER (ORDER BY vtime, id) AS rank FROM suffix
            )
            UPDATE jobq.jobs j SET vtime = t.vtime
            FROM holders h JOIN tags t ON t.rank = h.rank
            WHERE j.id = h.id AND j.vtime IS DISTINCT FROM t.vtime""";

    private TenantPriority() {}

    /** Reorders the tenant's queued jobs after an enqueue of jobs with {@code priority} above 0. */
    static void reorder(DSLContext tx, String queue, String tenant, int priority) {
        if (priority == 0) return;
        tx.execute(JobqSchema.of(tx).sql(REORDER), queue, tenant, val(priority, SQLDataType.SMALLINT));
    }
}
