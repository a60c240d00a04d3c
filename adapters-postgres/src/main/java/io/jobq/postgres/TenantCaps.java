package io.jobq.postgres;

import static io.jobq.postgres.schema.Tables.JOBS;
import static io.jobq.postgres.schema.Tables.TENANTS;

import io.jobq.application.port.CapUsage;
import io.jobq.application.port.JobStore;
import io.jobq.application.port.StoreUnavailableException;
import io.jobq.application.port.TenantSettings;
import io.jobq.application.port.TenantUpdate;
import io.jobq.domain.fairness.MaxRunning;
import io.jobq.domain.fairness.TenantWeight;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.tenant.TenantId;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.SortedSet;
import java.util.TreeSet;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Record;
import org.jooq.impl.DSL;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Per-tenant concurrency caps ({@code tenants.max_running}), kept exact without touching the claim.
 *
 * <h2>The design</h2>
 * For a tenant with a cap in a queue, the store keeps this invariant: its jobs there that are queued or
 * running number at most the cap. Claims take only queued jobs, so however many workers race, no claim can
 * start a job beyond the cap, and the claim statement is the same lock-free SKIP LOCKED index scan for
 * every tenant: no counter row, no tenant lock, no check on the claim path. The capped tenant's runnable
 * jobs beyond the cap wait as {@code held} (outside {@code jobs_runnable}, so its backlog costs other
 * tenants' claims nothing) and are released, oldest first and each with a fresh fair tag
 * ({@link FairTags#RELEASE}), when the count drops.
 *
 * <p>The count is not a counter: {@link FairTags#RELEASE} counts the tenant's queued and running jobs on
 * {@code jobs_capped_active}, a partial index only capped tenants' jobs enter (uncapped tenants pay for
 * nothing). So no path that ends a run (a completion, a failure, a reaped lease, a row edited by hand)
 * has to remember to decrement anything, and an expired lease frees its slot exactly once: when the reaper
 * moves the row out of running, which happens once. Every path that ADDS to the count (an enqueue,
 * promotion, a retry, a release, a cap change) holds the tenant's row lock while it does, which is what
 * makes counting exact; see {@link FairTags#RELEASE}.
 *
 * <h2>Who releases</h2>
 * The enqueue, promotion and retry of a capped tenant's job release in their own transaction. When runs
 * end, the outcome write releases for the capped tenants among them right after ({@link #releaseAfterRunsEnded}),
 * and every maintenance pass sweeps all capped tenants with held jobs ({@link #sweep}), which covers reaped
 * leases, a worker that died between its outcome and the release, and any release that failed.
 * A REPEATABLE READ transaction enqueueing through {@code JobClient} cannot over-release on an old
 * snapshot: every path that adds to the count also updates the tenant row, so such a transaction gets a
 * serialization failure instead.
 */
final class TenantCaps {
    private static final Logger log = LoggerFactory.getLogger(TenantCaps.class);

    /** A (queue, tenant) pair, sorted so that rows are always locked in the same order (no deadlocks). */
    record Key(String queue, String tenant) implements Comparable<Key> {
        @Override
        public int compareTo(Key o) {
            int c = queue.compareTo(o.queue);
            return c != 0 ? c : tenant.compareTo(o.tenant);
        }
    }

    /**
     * What a batch of ended runs leaves for {@link #releaseAfterRunsEnded}: the tenants among them whose
     * jobs are gated (capped, or in a work queue), and the measured run times of runs a work queue charged
     * an estimate for. Not thread-safe: one per outcome write.
     */
    static final class EndedRuns {
        private final SortedSet<Key> gated = new TreeSet<>();
        private final List<Key> measuredKeys = new ArrayList<>();
        private final List<Double> measuredMs = new ArrayList<>();
        private final List<Double> chargedMs = new ArrayList<>();

        /** A row the outcome statement changed ({@code j.*}); {@code ran} is what the worker measured. */
        void add(JobRows.Columns row, Optional<Duration> ran) {
            if (!Boolean.TRUE.equals(row.get(JOBS.CAPPED))) return;
            Key key = new Key(row.get(JOBS.QUEUE), row.get(JOBS.TENANT));
            gated.add(key);
            Double cost = row.get(JOBS.COST);
            if (cost != null && ran.isPresent()) {
                measuredKeys.add(key);
                measuredMs.add(Math.min(1e9, Math.max(JobStore.MIN_CHARGED_MS, ran.get().toNanos() / 1e6)));
                chargedMs.add(cost);
            }
        }

        /** A gated tenant whose queued or running count dropped other than by a run's end (a cancel). */
        void addGated(Key key) {
            gated.add(key);
        }

        boolean isEmpty() {
            return gated.isEmpty();
        }

        int tenants() {
            return gated.size();
        }

        void clear() {
            gated.clear();
            measuredKeys.clear();
            measuredMs.clear();
            chargedMs.clear();
        }
    }

    /** Appends measured runs, for the next {@link FairTags#RELEASE} of each tenant to fold in; never waits for a lock. */
    private static final String MEASURED = """
            INSERT INTO jobq.measured_runs (queue, tenant, runs, measured_ms, charged_ms)
            SELECT queue, tenant, count(*), sum(measured), sum(charged)
            FROM unnest({0}::text[], {1}::text[], {2}::float8[], {3}::float8[]) AS m(queue, tenant, measured, charged)
            GROUP BY queue, tenant""";

    /**
     * Locks one tenant row for a later {@link FairTags#RELEASE}, unless another transaction holds it: no row
     * then. Never waiting keeps the outcome statement and the maintenance pass off every tenant lock, including
     * one an application transaction holds through {@link JobClient} for as long as it likes, and out of
     * every lock cycle. A release skipped here is the sweep's, at the next maintenance pass.
     */
    private static final String LOCK = """
            SELECT max_running FROM jobq.tenants WHERE queue = {0} AND tenant = {1} FOR NO KEY UPDATE SKIP LOCKED""";
    /** {@link #LOCK}, waiting for the row (under the caller's statement timeout) rather than passing it over. */
    private static final String LOCK_WAITING = """
            SELECT max_running FROM jobq.tenants WHERE queue = {0} AND tenant = {1} FOR NO KEY UPDATE""";

    /**
     * Tenants with held jobs and room for some (under the cap, and in a work queue under the window): the sweep's work list. It walks the distinct (queue, tenant)
     * pairs of jobs_held (a loose index scan: one probe per pair, however many jobs each holds) and keeps
     * those whose tenant has no cap (removed by hand, not through the API, which releases at once) or is
     * below it, counted on jobs_capped_active up to max_running entries. Tenants at their cap are passed
     * over, or they would fill every pass's {@code LIMIT} and hide the tenants behind them for good.
     */
    private static final String WITH_HELD = """
            WITH RECURSIVE held AS (
                (SELECT queue, tenant FROM jobq.jobs WHERE state = 'held' ORDER BY queue, tenant LIMIT 1)
                UNION ALL
                SELECT n.queue, n.tenant FROM held p
                CROSS JOIN LATERAL (SELECT j.queue, j.tenant FROM jobq.jobs j
                                    WHERE j.state = 'held' AND (j.queue, j.tenant) > (p.queue, p.tenant)
                                    ORDER BY j.queue, j.tenant LIMIT 1) n
            )
            SELECT h.queue, h.tenant FROM held h JOIN jobq.tenants t ON t.queue = h.queue AND t.tenant = h.tenant
            WHERE (t.max_running IS NULL
                   OR (SELECT count(*) FROM (SELECT 1 FROM jobq.jobs a
                                             WHERE a.capped AND a.state IN ('queued', 'running') AND a.queue = t.queue AND a.tenant = t.tenant
                                             LIMIT t.max_running) active) < t.max_running)
              AND (NOT %s
                   OR (SELECT count(*) FROM (SELECT 1 FROM jobq.jobs a
                                             WHERE a.capped AND a.state = 'queued' AND a.queue = t.queue AND a.tenant = t.tenant
                                             LIMIT %d) queued_now) < CASE WHEN t.run_ms IS NULL THEN 1 ELSE %d END)
            LIMIT {0}""".formatted(FairTags.chargesWork("t.queue"), JobStore.WORK_WINDOW, JobStore.WORK_WINDOW);

    /**
     * A cap set: the tenant's live jobs count from now on (one statement, so the next one sees them).
     * Scheduled jobs are left alone: promotion sets their flag when they become runnable, and it locks them
     * BEFORE their tenant's row, the opposite order of this transaction (a deadlock, if this locked them).
     */
    private static final String MARK = """
            UPDATE jobq.jobs SET capped = true
            WHERE queue = {0} AND tenant = {1} AND state IN ('queued', 'held', 'running') AND NOT capped""";

    /**
     * A new or lowered cap: holds the tenant's queued jobs beyond it, newest tags first (running jobs are
     * never stopped). Binds: {0} queue, {1} tenant, {2} the cap. Runs after {@link #MARK}, in a statement of
     * its own: PostgreSQL skips a row a statement updates twice, and a CTE does not see its siblings' writes.
     */
    private static final String HOLD_EXCESS = """
            WITH excess AS MATERIALIZED (
                SELECT id FROM jobq.jobs
                WHERE state = 'queued' AND queue = {0} AND tenant = {1}
                ORDER BY vtime DESC, id DESC
                LIMIT greatest(0, (SELECT count(*) FROM jobq.jobs a
                                   WHERE a.capped AND a.state IN ('queued', 'running') AND a.queue = {0} AND a.tenant = {1}) - {2})
                FOR UPDATE
            )
            UPDATE jobq.jobs j SET state = 'held', vtime = NULL
            FROM excess e WHERE j.id = e.id""";

    /**
     * A removed cap: the tenant's live jobs are no longer counted (held ones are released by RELEASE),
     * unless the queue charges by work, which counts them for its window. Scheduled jobs are left alone, as
     * in {@link #MARK}.
     */
    private static final String UNMARK = """
            UPDATE jobq.jobs SET capped = false
            WHERE queue = {0} AND tenant = {1} AND state IN ('queued', 'running') AND capped AND NOT %s""".formatted(
            FairTags.chargesWork("{0}"));

    /** Usage of every capped tenant (metrics). */
    private static final String USAGE = """
            SELECT t.queue, t.tenant, t.max_running,
                   (SELECT count(*) FROM jobq.jobs a WHERE a.capped AND a.state = 'running' AND a.queue = t.queue AND a.tenant = t.tenant),
                   (SELECT count(*) FROM jobq.jobs h WHERE h.state = 'held' AND h.queue = t.queue AND h.tenant = t.tenant)
            FROM jobq.tenants t WHERE t.max_running IS NOT NULL
            ORDER BY t.queue, t.tenant
            LIMIT {0}""";

    private TenantCaps() {}

    /**
     * Releases what the cap allows of the tenant's held jobs. {@code tx} must be a transaction that already
     * holds the tenant's row lock from an earlier statement (see {@link FairTags#RELEASE}).
     *
     * @return how many jobs became queued
     */
    static int release(DSLContext tx, String queue, String tenant) {
        return tx.resultQuery(JobqSchema.of(tx).sql(FairTags.RELEASE), queue, tenant).fetchSingle(0, Long.class).intValue();
    }

    /**
     * Releases what the cap allows of the tenant's held jobs in a transaction of its own, waiting for the
     * tenant's row lock (under {@code dsl}'s statement timeout): for held jobs that a statement committed on its
     * own, with no transaction left to release them in ({@link Enqueuer#insertCommitted}). Waiting, not
     * skipping: the transaction that holds the row may have run its own release before those jobs committed.
     *
     * @return how many jobs became queued
     */
    static int releaseWaiting(DSLContext dsl, String queue, String tenant) {
        return dsl.transactionResult(cfg -> lockAndRelease(cfg.dsl(), new TreeSet<>(List.of(new Key(queue, tenant))), LOCK_WAITING));
    }

    /**
     * After runs of gated tenants ended: in one transaction, appends their measured run times
     * ({@link #MEASURED}), locks the rows of those tenants not locked by another transaction ({@link #LOCK},
     * sorted, never waiting) and releases for each of them; the others are left to the sweep, and their
     * measured runs to their next release. Nothing to do, and no statement sent, when {@code ended} is empty.
     */
    static int releaseAfterRunsEnded(DSLContext dsl, EndedRuns ended) {
        if (ended.isEmpty()) return 0;
        return dsl.transactionResult(cfg -> {
            DSLContext tx = cfg.dsl();
            if (!ended.measuredKeys.isEmpty()) {
                tx.execute(JobqSchema.of(tx).sql(MEASURED), ended.measuredKeys.stream().map(Key::queue).toArray(String[]::new),
                        ended.measuredKeys.stream().map(Key::tenant).toArray(String[]::new),
                        ended.measuredMs.toArray(Double[]::new), ended.chargedMs.toArray(Double[]::new));
            }
            return lockAndRelease(tx, ended.gated, LOCK);
        });
    }

    /** Locks the rows of {@code keys} with {@code lock} ({@link #LOCK} or {@link #LOCK_WAITING}), sorted, and releases for each locked. */
    private static int lockAndRelease(DSLContext tx, SortedSet<Key> keys, String lock) {
        {
            List<Key> locked = new ArrayList<>();
            for (Key k : keys) {
                if (tx.resultQuery(JobqSchema.of(tx).sql(lock), k.queue(), k.tenant()).fetch().isNotEmpty()) locked.add(k);
            }
            int released = 0;
            for (Key k : locked) released += release(tx, k.queue(), k.tenant());
            return released;
        }
    }

    /**
     * Maintenance: releases for up to {@code limit} tenants that have held jobs and room ({@link #WITH_HELD});
     * returns how many became queued.
     */
    static int sweep(DSLContext dsl, int limit) {
        List<Key> keys = new ArrayList<>();
        for (Record r : dsl.resultQuery(JobqSchema.of(dsl).sql(WITH_HELD), limit)) {
            keys.add(new Key(r.get(0, String.class), r.get(1, String.class)));
        }
        int released = 0;
        // One transaction per tenant: a short lock each, and one tenant's failure is not the others'.
        for (Key k : keys) {
            try {
                released += PostgresJobStore.run("release held jobs",
                        () -> dsl.transactionResult(cfg -> lockAndRelease(cfg.dsl(), new TreeSet<>(List.of(k)), LOCK)));
            } catch (StoreUnavailableException e) {
                throw e;
            } catch (RuntimeException e) {
                log.atWarn().setCause(e).log("releasing held jobs of tenant {} in queue {} failed; the next pass tries"
                        + " again: {}", k.tenant(), k.queue(), StoreErrors.serverMessage(e));
            }
        }
        return released;
    }

    /** Applies {@code u} in one transaction; see {@link io.jobq.application.port.JobStore#configureTenant}. */
    static TenantSettings configure(DSLContext dsl, TenantUpdate u) {
        String queue = u.queue().value();
        String tenant = u.tenant().value();
        return dsl.transactionResult(cfg -> {
            DSLContext tx = cfg.dsl();
            // The upsert takes the row lock that every later statement here relies on.
            Field<Double> weight = u.weight().isPresent() ? DSL.val(u.weight().get().value()) : TENANTS.WEIGHT;
            Record row = tx.insertInto(TENANTS, TENANTS.QUEUE, TENANTS.TENANT, TENANTS.WEIGHT)
                    .values(queue, tenant, u.weight().orElse(TenantWeight.DEFAULT).value())
                    .onConflict(TENANTS.QUEUE, TENANTS.TENANT)
                    .doUpdate().set(TENANTS.WEIGHT, weight)
                    .returning(TENANTS.WEIGHT, TENANTS.MAX_RUNNING)
                    .fetchSingle();
            Integer max = switch (u.cap()) {
                case TenantUpdate.CapChange.Keep keep -> row.get(TENANTS.MAX_RUNNING);
                case TenantUpdate.CapChange.Remove remove -> null;
                case TenantUpdate.CapChange.SetTo set -> set.max().value();
            };
            if (!(u.cap() instanceof TenantUpdate.CapChange.Keep)) {
                tx.update(TENANTS).set(TENANTS.MAX_RUNNING, max)
                        .where(TENANTS.QUEUE.eq(queue).and(TENANTS.TENANT.eq(tenant))).execute();
                if (max == null) {
                    tx.execute(JobqSchema.of(tx).sql(UNMARK), queue, tenant);
                } else {
                    tx.execute(JobqSchema.of(tx).sql(MARK), queue, tenant);
                    tx.execute(JobqSchema.of(tx).sql(HOLD_EXCESS), queue, tenant, max);
                }
                release(tx, queue, tenant);
            }
            return new TenantSettings(u.tenant(), u.queue(), new TenantWeight(row.get(TENANTS.WEIGHT)),
                    Optional.ofNullable(max).map(MaxRunning::new));
        });
    }

    /** Running and held jobs of up to {@code limit} capped tenants, by queue and tenant. */
    static List<CapUsage> usage(DSLContext dsl, int limit) {
        List<CapUsage> out = new ArrayList<>();
        for (Record r : dsl.resultQuery(JobqSchema.of(dsl).sql(USAGE), limit)) {
            out.add(new CapUsage(new QueueName(JobRows.storedName(r.get(0, String.class))),
                    new TenantId(JobRows.storedName(r.get(1, String.class))), new MaxRunning(r.get(2, Integer.class)),
                    r.get(3, Long.class), r.get(4, Long.class)));
        }
        return out;
    }

}
