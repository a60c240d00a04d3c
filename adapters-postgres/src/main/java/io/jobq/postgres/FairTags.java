package io.jobq.postgres;

import io.jobq.application.port.JobStore;

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
 * bounded to [1e-6, 1e6] so that a realistic number of jobs stays far inside that range. A work queue's
 * tags count milliseconds of run time (at least 1 a job), so the same bound is 4.5·10^12 ms of the tenant's
 * work at weight 1,000: about 140 years of it.
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
     * Whether the queue named by {@code queue} (a bind placeholder or a column) charges by work, as an SQL
     * boolean: its {@code queues} row says {@code work}; a queue without a row charges per job.
     */
    static String chargesWork(String queue) {
        return "coalesce((SELECT qs.fairness = 'work' FROM jobq.queues qs WHERE qs.queue = %s), false)".formatted(queue);
    }

    /**
     * Enqueue of 1..1,000 runnable jobs of one tenant, in ONE statement: charge the tenant (the upsert on
     * tenants takes its row lock, ON CONFLICT DO UPDATE), insert the jobs with consecutive tags
     * {@code new_L - (n - k)/weight} = {@code max(V, L) + k/weight}, and {@code pg_notify}, which PostgreSQL
     * delivers only on commit. A new tenant's row is created with weight 1, no cap and L = V + n. A tenant
     * with a cap is not charged here: its jobs are inserted held, without tags, and the caller releases as
     * many as the cap allows with {@link #RELEASE}: in the same transaction, the upsert's lock still held
     * ({@link Enqueuer#insert}), or, where this statement committed on its own, in a transaction of its own
     * that takes the lock again ({@link Enqueuer#insertCommitted}).
     * So is every job of a work queue: {@link #RELEASE} tags it from the tenant's estimate.
     * Binds: {0} queue, {1} tenant, {2} task, {3} n, {4} max attempts, {5} idempotency key, {6} payloads,
     * {7} priority.
     * Notifies only when a job was inserted queued: held jobs wake no worker (a capped tenant at its cap would
     * wake every idle one for nothing), and {@link #RELEASE} notifies for the ones it releases. (An aggregate,
     * so the join keeps its one row when nothing is notified.)
     * Returns the inserted rows in payload order; none when the idempotency key was taken (the caller rolls
     * back, undoing the charge).
     */
    static final String ENQUEUE = """
            WITH v AS MATERIALIZED (
                SELECT %s AS now_v, %s AS work
            ), charged AS (
                INSERT INTO jobq.tenants AS t (queue, tenant, last_vtime)
                SELECT {0}, {1}, CASE WHEN v.work THEN v.now_v ELSE v.now_v + {3} END FROM v
                ON CONFLICT (queue, tenant) DO UPDATE
                    SET last_vtime = CASE WHEN t.max_running IS NULL AND NOT (SELECT work FROM v)
                                          THEN greatest(t.last_vtime, (SELECT now_v FROM v)) + {3} / t.weight
                                          ELSE t.last_vtime END
                RETURNING t.last_vtime, t.weight, t.max_running
            ), gate AS MATERIALIZED (
                SELECT c.last_vtime, c.weight, (c.max_running IS NOT NULL OR v.work) AS held FROM charged c CROSS JOIN v
            ), inserted AS (
                INSERT INTO jobq.jobs (queue, tenant, task, payload, state, vtime, run_at, max_attempts, idempotency_key, capped,
                                       priority)
                SELECT {0}, {1}, {2}, p.payload::jsonb,
                       CASE WHEN c.held THEN 'held' ELSE 'queued' END,
                       CASE WHEN NOT c.held THEN c.last_vtime - ({3} - p.ord) / c.weight END,
                       now(), {4}, {5}, c.held, {7}
                FROM unnest({6}::text[]) WITH ORDINALITY AS p(payload, ord) CROSS JOIN gate c
                ORDER BY p.ord
                ON CONFLICT (tenant, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
                RETURNING *
            )
            SELECT i.* FROM inserted i
            CROSS JOIN (SELECT max(pg_notify('%s', {0})::text) FROM (SELECT 1 FROM inserted WHERE state = 'queued' LIMIT 1) any_queued) notified
            ORDER BY i.id""".formatted(queueVirtualTime("{0}"), chargesWork("{0}"), Enqueuer.CHANNEL);

    /**
     * Promotion of one queue's due scheduled jobs in one statement. due: the queue's oldest due jobs, but for
     * the tenants passed by ({2}), riding jobs_due_by_queue, SKIP LOCKED so concurrent promoters take disjoint
     * sets. locked: their tenants' rows, waiting for each ({@link #PROMOTE}, under a short lock_timeout:
     * an enqueue holds its tenant's row for its transaction) or SKIP LOCKED ({@link #PROMOTE_SKIPPING}: for a
     * row held longer, an enqueue inside an application's open transaction); {@link DuePromotion} says when
     * each. FOR NO KEY UPDATE because enqueues' foreign-key checks take KEY SHARE on the same rows and must not
     * be blocked. V is read once, before any job of the pass is queued, so jobs promoted together into an
     * empty queue start level and none is charged for another. Each tenant's k-th promoted job (by run_at,
     * id) gets {@code max(V, L) + k/weight}. A tenant with a cap, or in a work queue, is not charged: its due
     * jobs become held, and the caller releases what the cap allows with {@link #RELEASE} in the same
     * transaction. Binds: {0} the most jobs to promote, {1} the queue, {2} the tenants to pass by (text[]).
     * Returns, per tenant with due jobs taken: (queue, tenant, promoted, of them held, notified, the highest
     * priority queued, whether its row was locked, its due jobs taken), notifying the queue's listeners on
     * commit when any job became queued.
     */
    static final String PROMOTE = promote("");
    /** {@link #PROMOTE}, passing over a tenant whose row another transaction holds (its row: not locked). */
    static final String PROMOTE_SKIPPING = promote(" SKIP LOCKED");

    private static String promote(String lockWait) {
        return """
            WITH due AS MATERIALIZED (
                SELECT id, queue, tenant, run_at FROM jobq.jobs
                WHERE state = 'scheduled' AND queue = {1} AND run_at <= now() AND tenant <> ALL({2}::text[])
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
                SELECT t.queue, t.tenant, t.weight, t.last_vtime, t.max_running FROM jobq.tenants t
                WHERE (t.queue, t.tenant) IN (SELECT queue, tenant FROM counts)
                ORDER BY t.queue, t.tenant
                FOR NO KEY UPDATE%s
            ), queue_v AS MATERIALIZED (
                SELECT q.queue, %s AS v, %s AS work
                FROM (SELECT DISTINCT queue FROM counts) q
            ), base AS MATERIALIZED (
                SELECT l.queue, l.tenant, l.weight, (l.max_running IS NOT NULL OR qv.work) AS held,
                       greatest(l.last_vtime, qv.v) AS b, c.n
                FROM locked l JOIN queue_v qv USING (queue) JOIN counts c USING (queue, tenant)
            ), charged AS (
                UPDATE jobq.tenants t SET last_vtime = base.b + base.n / base.weight
                FROM base WHERE t.queue = base.queue AND t.tenant = base.tenant AND NOT base.held
            ), promoted AS (
                UPDATE jobq.jobs j SET
                    state = CASE WHEN base.held THEN 'held' ELSE 'queued' END,
                    vtime = CASE WHEN NOT base.held THEN base.b + r.ord / base.weight END,
                    capped = base.held
                FROM ranked r JOIN base USING (queue, tenant)
                WHERE j.id = r.id
                RETURNING j.queue, j.tenant, j.state, j.priority
            ), by_tenant AS MATERIALIZED (
                SELECT queue, tenant, count(*) AS n, count(*) FILTER (WHERE state = 'held') AS held,
                       coalesce(max(priority) FILTER (WHERE state = 'queued'), 0) AS top_priority
                FROM promoted GROUP BY queue, tenant
            )
            SELECT c.queue, c.tenant, coalesce(b.n, 0), coalesce(b.held, 0), n.notified, coalesce(b.top_priority, 0),
                   EXISTS (SELECT 1 FROM locked l WHERE l.queue = c.queue AND l.tenant = c.tenant), c.n
            FROM counts c
            LEFT JOIN by_tenant b ON b.queue = c.queue AND b.tenant = c.tenant
            CROSS JOIN (SELECT max(pg_notify('%s', {1})::text) AS notified
                        FROM (SELECT 1 FROM by_tenant WHERE n > held LIMIT 1) any_queued) n""".formatted(
                lockWait, queueVirtualTime("q.queue"), chargesWork("q.queue"), Enqueuer.CHANNEL);
    }

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

    /**
     * Releases a tenant's held jobs in one queue, as many as its cap and its queue allow now, highest
     * priority first, then oldest (by id, the tenant's own order), each tagged and queued; the tenant is
     * charged for them as a promotion would charge it. A held job another transaction holds (a cancel in an
     * application's open transaction) is passed over, not waited for: the next release or sweep sees it.
     * Binds: {0} queue, {1} tenant. Returns (released), notifying the queue's listeners on commit when it is
     * above 0.
     * <ul>
     *   <li>Room: with a cap, {@code max_running - (its queued + running jobs)}, counted on
     *       {@code jobs_capped_active}; in a work queue also {@code WORK_WINDOW - its queued jobs}; the
     *       smaller of the two. With neither (a cap removed, a queue set back to jobs), every held job.</li>
     *   <li>Work queues, SFQ with variable service times (Goyal, Vin and Cheng, 1996): first the tenant's
     *       {@code measured_runs} are folded in (taken, under the row lock): its last tag L moves by
     *       {@code (measured - charged) / weight} (a run longer than its estimate costs more, a shorter one
     *       refunds; never below 0, and V still bounds it from below, so an idle tenant banks nothing), and
     *       its moving average {@code run_ms} takes each run with weight 0.2. Then each released job costs
     *       the estimate {@code e} = that average (a tenant without one: the queue's tenants' average, else
     *       {@value io.jobq.application.port.JobStore#MIN_CHARGED_MS} ms), so the k-th gets
     *       {@code max(V, L, its queued tags) + k·e/weight} and keeps {@code e} as {@code jobs.cost}.
     *       Starting above its queued tags keeps the tenant's jobs in order after a refund; L itself
     *       becomes {@code max(V, L) + k·e/weight}, so a refund that could not lower those tags stays
     *       owed (it absorbs later overcharges) instead of being dropped, which would overcharge every
     *       tenant whose run times jitter. A tenant with no measured run yet has one job tagged, not a
     *       window: its first estimate is a guess, and a window of guesses could overrun by 32 jobs. A
     *       queue set back to jobs takes the measured runs of jobs tagged before without moving L: its
     *       tags count jobs, not milliseconds.</li>
     * </ul>
     *
     * <p><b>The caller must hold the tenant's row lock from an EARLIER statement of its transaction</b> (the
     * enqueue's upsert, promotion's {@code locked}, or {@link TenantCaps#LOCK}). Every statement that can
     * add to the count (enqueue, promotion, retry, release, a cap change) takes that lock first, so under
     * READ COMMITTED this statement's snapshot, taken after the lock was granted, sees every such change
     * committed before; what it may miss are runs that ended meanwhile, which only makes it release fewer,
     * and those runs' own releases follow. Taking the lock in this same statement would not do: its
     * snapshot would predate the wait.
     */
    static final String RELEASE = """
            WITH t AS MATERIALIZED (
                SELECT weight, last_vtime, max_running, run_ms, %2$s AS work
                FROM jobq.tenants WHERE queue = {0} AND tenant = {1}
            ), taken AS (
                DELETE FROM jobq.measured_runs m WHERE m.queue = {0} AND m.tenant = {1}
                RETURNING m.runs, m.measured_ms, m.charged_ms
            ), spent AS MATERIALIZED (
                SELECT coalesce(sum(runs), 0) AS n, coalesce(sum(measured_ms), 0) AS measured,
                       coalesce(sum(charged_ms), 0) AS charged
                FROM taken
            ), folded AS MATERIALIZED (
                SELECT CASE WHEN t.work THEN greatest(0, t.last_vtime + (s.measured - s.charged) / t.weight)
                            ELSE t.last_vtime END AS l,
                       CASE WHEN s.n = 0 THEN t.run_ms
                            WHEN t.run_ms IS NULL THEN s.measured / s.n
                            ELSE t.run_ms * power(0.8, s.n) + s.measured / s.n * (1 - power(0.8, s.n)) END AS run_ms,
                       s.n AS runs
                FROM t CROSS JOIN spent s
            ), active AS MATERIALIZED (
                SELECT count(*) AS live, count(*) FILTER (WHERE a.state = 'queued') AS queued,
                       max(a.vtime) FILTER (WHERE a.state = 'queued') AS top
                FROM jobq.jobs a
                WHERE a.capped AND a.state IN ('queued', 'running') AND a.queue = {0} AND a.tenant = {1}
            ), room AS MATERIALIZED (
                SELECT CASE WHEN t.max_running IS NULL AND NOT t.work THEN NULL
                            ELSE greatest(0, least(t.max_running - a.live,
                                                   CASE WHEN t.work THEN CASE WHEN f.run_ms IS NULL THEN 1 ELSE %3$s END - a.queued END))
                       END AS n
                FROM t CROSS JOIN active a CROSS JOIN folded f
            ), picked AS MATERIALIZED (
                SELECT id, row_number() OVER (ORDER BY priority DESC, id) AS ord FROM (
                    SELECT h.id, h.priority FROM jobq.jobs h
                    WHERE h.state = 'held' AND h.queue = {0} AND h.tenant = {1}
                    ORDER BY h.priority DESC, h.id
                    LIMIT (SELECT n FROM room)
                    FOR UPDATE SKIP LOCKED) held
            ), v AS MATERIALIZED (
                SELECT %1$s AS v
            ), base AS MATERIALIZED (
                SELECT greatest(f.l, v.v, CASE WHEN t.work THEN a.top END) AS b, greatest(f.l, v.v) AS from_l,
                       t.weight, t.max_running, t.work,
                       CASE WHEN t.work THEN greatest(%4$s, coalesce(f.run_ms,
                                (SELECT avg(o.run_ms) FROM jobq.tenants o WHERE o.queue = {0} AND o.run_ms IS NOT NULL), %4$s))
                            ELSE 1 END AS cost,
                       f.l, f.run_ms, f.runs, (SELECT count(*) FROM picked) AS k
                FROM t CROSS JOIN folded f CROSS JOIN active a CROSS JOIN v
            ), charged AS (
                UPDATE jobq.tenants x SET last_vtime = CASE WHEN base.k > 0 THEN base.from_l + base.k * base.cost / base.weight ELSE base.l END,
                                          run_ms = base.run_ms
                FROM base WHERE x.queue = {0} AND x.tenant = {1} AND (base.k > 0 OR base.runs > 0)
            ), released AS (
                UPDATE jobq.jobs j SET state = 'queued', vtime = base.b + p.ord * base.cost / base.weight,
                                       cost = CASE WHEN base.work THEN base.cost END,
                                       capped = base.max_running IS NOT NULL OR base.work
                FROM picked p CROSS JOIN base
                WHERE j.id = p.id
                RETURNING j.id
            )
            SELECT (SELECT count(*) FROM released) AS released,
                   (SELECT pg_notify('%5$s', {0}) FROM (SELECT 1 FROM released LIMIT 1) any_row)::text AS notified""".formatted(
            queueVirtualTime("{0}"), chargesWork("{0}"), JobStore.WORK_WINDOW, JobStore.MIN_CHARGED_MS, Enqueuer.CHANNEL);
}
