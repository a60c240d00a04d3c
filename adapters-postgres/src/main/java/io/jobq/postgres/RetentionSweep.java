package io.jobq.postgres;

import org.jooq.DSLContext;
import org.jooq.impl.SQLDataType;

import static org.jooq.impl.DSL.val;

/**
 * Deletes finished jobs past their queue's retention ({@link io.jobq.application.port.JobStore#deleteFinished}).
 *
 * <p>One statement: a loose index scan over {@code jobs_finished} (queue, state, finished_at) finds the
 * (queue, state) pairs that have finished jobs, one probe each however many rows they hold; each pair's
 * retention comes from its queue's row (the column defaults for a queue without one: 7, 30 and 7 days);
 * then per pair at most {@code limit} of its oldest rows past the retention, SKIP LOCKED so an operator's
 * retry of a dead job (which locks it) or another worker's sweep is never waited for. A state kept for
 * ever (0) is never read beyond its first probe. Every batch is its own short transaction.
 */
final class RetentionSweep {
    private static final String DELETE = """
            WITH RECURSIVE pairs AS (
                (SELECT queue, state FROM jobq.jobs WHERE state IN ('done', 'dead', 'cancelled') ORDER BY queue, state LIMIT 1)
                UNION ALL
                SELECT n.queue, n.state FROM pairs p
                CROSS JOIN LATERAL (SELECT j.queue, j.state FROM jobq.jobs j
                                    WHERE j.state IN ('done', 'dead', 'cancelled') AND (j.queue, j.state) > (p.queue, p.state)
                                    ORDER BY j.queue, j.state LIMIT 1) n
            ), kept AS (
                SELECT p.queue, p.state,
                       CASE p.state WHEN 'done' THEN coalesce(q.keep_done_s, 604800)
                                    WHEN 'dead' THEN coalesce(q.keep_dead_s, 2592000)
                                    ELSE coalesce(q.keep_cancelled_s, 604800) END AS keep_s
                FROM pairs p LEFT JOIN jobq.queues q ON q.queue = p.queue
            ), doomed AS (
                SELECT d.id FROM kept k
                CROSS JOIN LATERAL (SELECT j.id FROM jobq.jobs j
                                    WHERE j.queue = k.queue AND j.state = k.state
                                      -- repeats the index's predicate: without it jobs_finished is not usable
                                      -- here (k.state is a parameter), and each pair seq-scans the table
                                      AND j.state IN ('done', 'dead', 'cancelled')
                                      AND j.finished_at < now() - k.keep_s * interval '1 second'
                                    ORDER BY j.finished_at
                                    LIMIT {0}
                                    FOR UPDATE SKIP LOCKED) d
                WHERE k.keep_s > 0
            )
            DELETE FROM jobq.jobs WHERE id = ANY (ARRAY(SELECT id FROM doomed))""";

    private RetentionSweep() {}

    /** @return how many jobs were deleted */
    static int delete(DSLContext dsl, int limit) {
        return dsl.execute(JobqSchema.of(dsl).sql(DELETE), val(limit, SQLDataType.INTEGER));
    }
}
