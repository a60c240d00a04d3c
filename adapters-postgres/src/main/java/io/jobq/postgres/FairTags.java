package io.jobq.postgres;

/**
 * Every statement that hands out a fair start tag ({@code jobs.vtime}) and charges a tenant for it: the
 * enqueue of runnable jobs, the promotion of due scheduled jobs, and the retry of a dead job. The claim
 * only reads the tags ({@code ORDER BY vtime, id}, in {@link PostgresJobStore}).
 *
 * <h2>The formula: start-time fair queuing</h2>
 * Start-time fair queuing (SFQ; Goyal, Vin and Cheng, "Start-time Fair Queueing: A Scheduling Algorithm
 * for Integrated Services Packet Switching Networks", SIGCOMM 1996), applied to jobs. When a job becomes
 * runnable it gets the start tag
 * <pre>
 *   S = max(V, L) + 1 / weight
 * </pre>
 * where {@code V} is the queue's virtual time, {@code L} the tenant's last tag in the queue
 * ({@code tenants.last_vtime}, which then becomes {@code S}) and {@code weight} the tenant's weight there.
 * Workers take the lowest tag, ties by the lower id. Worked numbers, weight 1: a flood gets 1, 2, 3, …; a
 * tenant arriving while the flood's head is at 51 gets 52 and interleaves with the flood instead of waiting
 * behind it; weights 3 and 1 step by 1/3 and 1, so two backlogged tenants are served 3:1; a tenant's own
 * jobs keep their order, because {@code S > L}. A batch of n jobs is charged at once: the k-th gets
 * {@code max(V, L) + k/weight}, and L becomes {@code max(V, L) + n/weight}.
 *
 * <h2>V, and why an idle tenant banks no credit</h2>
 * {@link #queueVirtualTime V(queue)} is the lowest tag still queued in the queue (one probe of
 * {@code jobs_runnable}) or, when nothing is queued, the highest tag handed out in the queue
 * ({@code max(tenants.last_vtime)}, riding {@code tenants_queue_last_vtime}), never 0 again: a tenant
 * that idled while others ran restarts from V, not from its old L, so it cannot spend its idle time as a
 * burst (its old L is far behind V). Only tags in [0, 1e300), the range schema V2's
 * {@code jobs_vtime_finite} allows, count for V: a queued row with a tag outside it (written before V2, or
 * with the constraint dropped) must not make V negative or infinite, or every charge in the queue would
 * fail {@code tenants_last_vtime_finite}. The bounds are part of the index condition, so V stays one probe.
 *
 * <h2>Why a tenant's tags are distinct</h2>
 * Each statement updates the tenant's {@code tenants} row (an upsert for an enqueue), which locks it until
 * commit: a tenant's concurrent enqueues, promotions and retries are serialised on that row, and each reads
 * the L the previous one wrote, so their tags are distinct and increasing. Different tenants never wait
 * for each other. V may be read by concurrent statements at once; that only decides where a tenant
 * starts, never lets two of its jobs share a tag.
 *
 * <h2>Precision</h2>
 * Tags are IEEE-754 doubles ({@code double precision}). A tag stays strictly above the tenant's last one
 * while {@code 1/weight} exceeds the spacing of doubles near the tag, i.e. while
 * {@code tag < 2^52 · (1/weight)}: at weight 1,000 (step 0.001), any tag below 4.5·10^12. Weights are
 * bounded to [1e-6, 1e6] so that a realistic number of jobs stays far inside that range.
 */
final class FairTags {
    private FairTags() {}

    /**
     * V(queue) as an SQL expression, for the queue named by {@code queue} (a bind placeholder such as
     * {@code {0}} or a column such as {@code q.queue}); see the class comment.
     */
    static String queueVirtualTime(String queue) {
        return """
                coalesce(
                    (SELECT j.vtime FROM jobq.jobs j WHERE j.state = 'queued' AND j.queue = %1$s
                     AND j.vtime >= 0 AND j.vtime < 1e300
                     ORDER BY j.vtime, j.id LIMIT 1),
                    (SELECT max(t.last_vtime) FROM jobq.tenants t WHERE t.queue = %1$s),
                    0)""".formatted(queue);
    }

    /**
     * Enqueue of 1..1,000 runnable jobs of one tenant, in ONE statement: charge the tenant (the upsert on
     * tenants takes its row lock, ON CONFLICT DO UPDATE), insert the jobs with consecutive tags
     * {@code new_L - (n - k)/weight} = {@code max(V, L) + k/weight}, and {@code pg_notify}, which PostgreSQL
     * delivers only on commit. A new tenant's row is created with weight 1 and L = V + n.
     * Binds: {0} queue, {1} tenant, {2} task, {3} n, {4} max attempts, {5} idempotency key, {6} payloads.
     * Returns the inserted rows in payload order; none when the idempotency key was taken (the caller rolls
     * back, undoing the charge).
     */
    static final String ENQUEUE = """
            WITH v AS MATERIALIZED (
                SELECT %s AS now_v
            ), charged AS (
                INSERT INTO jobq.tenants AS t (queue, tenant, last_vtime)
                SELECT {0}, {1}, v.now_v + {3} FROM v
                ON CONFLICT (queue, tenant) DO UPDATE
                    SET last_vtime = greatest(t.last_vtime, (SELECT now_v FROM v)) + {3} / t.weight
                RETURNING t.last_vtime, t.weight
            ), inserted AS (
                INSERT INTO jobq.jobs (queue, tenant, task, payload, state, vtime, run_at, max_attempts, idempotency_key)
                SELECT {0}, {1}, {2}, p.payload::jsonb, 'queued', c.last_vtime - ({3} - p.ord) / c.weight,
                       now(), {4}, {5}
                FROM unnest({6}::text[]) WITH ORDINALITY AS p(payload, ord) CROSS JOIN charged c
                ORDER BY p.ord
                ON CONFLICT (tenant, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
                RETURNING *
            )
            SELECT i.* FROM inserted i
            CROSS JOIN (SELECT pg_notify('%s', {0}) FROM (SELECT 1 FROM inserted LIMIT 1) any_row) notified
            ORDER BY i.id""".formatted(queueVirtualTime("{0}"), Enqueuer.CHANNEL);

    /**
     * Promotion of one queue's due scheduled jobs in one statement. due: the queue's oldest due jobs,
     * riding jobs_due_by_queue, SKIP LOCKED so concurrent promoters take disjoint sets. locked: their
     * tenants' rows, locked in sorted (queue, tenant) order (LockRows sits above the Sort), so two promoters
     * needing the same tenants take them in the same order and cannot deadlock; FOR NO KEY UPDATE because
     * enqueues' foreign-key checks take KEY SHARE on the same rows and must not be blocked. V is read once,
     * before any job of the pass is queued, so jobs promoted together into an empty queue start level and
     * none is charged for another. Each tenant's k-th promoted job (by run_at, id) gets
     * {@code max(V, L) + k/weight}. Binds: {0} the most jobs to promote, {1} the queue. Returns
     * (queue, promoted count, notified) for the queue, notifying its listeners on commit.
     */
    static final String PROMOTE = """
            WITH due AS MATERIALIZED (
                SELECT id, queue, tenant, run_at FROM jobq.jobs
                WHERE state = 'scheduled' AND queue = {1} AND run_at <= now()
                ORDER BY run_at, id
                LIMIT {0}
                FOR UPDATE SKIP LOCKED
            ), ranked AS MATERIALIZED (
                SELECT id, queue, tenant,
                       row_number() OVER (PARTITION BY queue, tenant ORDER BY run_at, id) AS ord
                FROM due
            ), counts AS MATERIALIZED (
                SELECT queue, tenant, count(*) AS n FROM ranked GROUP BY queue, tenant
            ), locked AS MATERIALIZED (
                SELECT t.queue, t.tenant, t.weight, t.last_vtime FROM jobq.tenants t
                WHERE (t.queue, t.tenant) IN (SELECT queue, tenant FROM counts)
                ORDER BY t.queue, t.tenant
                FOR NO KEY UPDATE
            ), queue_v AS MATERIALIZED (
                SELECT q.queue, %s AS v
                FROM (SELECT DISTINCT queue FROM counts) q
            ), base AS MATERIALIZED (
                SELECT l.queue, l.tenant, l.weight, greatest(l.last_vtime, qv.v) AS b, c.n
                FROM locked l JOIN queue_v qv USING (queue) JOIN counts c USING (queue, tenant)
            ), charged AS (
                UPDATE jobq.tenants t SET last_vtime = base.b + base.n / base.weight
                FROM base WHERE t.queue = base.queue AND t.tenant = base.tenant
            ), promoted AS (
                UPDATE jobq.jobs j SET state = 'queued', vtime = base.b + r.ord / base.weight
                FROM ranked r JOIN base USING (queue, tenant)
                WHERE j.id = r.id
                RETURNING j.queue
            )
            SELECT p.queue, p.n, pg_notify('%s', p.queue)::text AS notified
            FROM (SELECT queue, count(*) AS n FROM promoted GROUP BY queue) p""".formatted(
            queueVirtualTime("q.queue"), Enqueuer.CHANNEL);

    /**
     * Charges a tenant one job and returns its tag, {@code max(V, L) + 1/weight}: the enqueue's charge, for
     * a row that exists already (a dead job retried). Binds: {0} queue, {1} tenant. The caller writes the
     * returned tag to the job in the same transaction.
     */
    static final String CHARGE_ONE = """
            WITH v AS MATERIALIZED (SELECT %s AS now_v)
            UPDATE jobq.tenants t SET last_vtime = greatest(t.last_vtime, (SELECT now_v FROM v)) + 1 / t.weight
            WHERE t.queue = {0} AND t.tenant = {1}
            RETURNING t.last_vtime""".formatted(queueVirtualTime("{0}"));
}
