package io.jobq.postgres;

import static org.jooq.impl.DSL.val;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.jooq.DSLContext;
import org.jooq.Record;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.SQLDataType;

/**
 * Promotes one queue's due scheduled jobs ({@link FairTags#PROMOTE}), neither stalled by a tenant row another
 * transaction holds nor starving that tenant. One per store: it remembers, per queue, the tenants it recently
 * passed by.
 *
 * <p>Each tenant's row is locked to charge it, and an enqueue holds its tenant's row until its transaction
 * commits: a few milliseconds through the API, as long as the application likes through {@code JobClient}.
 * So the pass first waits for the rows, at most {@value LockWait#MAX_MS} ms each ({@link LockWait}): a
 * tenant enqueueing hundreds of jobs a second holds its row most of the time, and passing it over whenever it
 * is held would leave its retries and delayed jobs scheduled for as long as it keeps enqueueing. Only when a
 * row stays held longer does the pass go on without it ({@link FairTags#PROMOTE_SKIPPING}), and then, while a
 * pass took its whole limit and passed a tenant by, again with the passed-by tenants' jobs left out
 * ({@value #SKIPPING_PASSES} passes at most, so up to that many times the limit), so that one tenant's open
 * transaction never holds back the other tenants' due jobs. The tenants passed by are left out of this
 * queue's passes for {@link #REMEMBERED} more, the waiting pass included, so that a maintainer repeating
 * promotion while passes come back full does not wait out the same held row each time; their jobs are
 * promoted by a later pass.
 */
final class DuePromotion {
    /** The most passes skipping held tenants: each leaves out the tenants held in the one before. */
    private static final int SKIPPING_PASSES = 3;
    /** How long tenants passed by are left out of their queue's passes. */
    static final Duration REMEMBERED = Duration.ofSeconds(1);

    /** A tenant whose jobs a pass promoted, of them {@code held} (a gated tenant's), the highest priority queued. */
    private record Promoted(String tenant, long promoted, long held, int topPriority) {}

    /**
     * One transaction's statement: what it promoted, the tenants it passed by (their rows were held), and how
     * many due jobs it took in all (its limit, when due jobs are left).
     */
    private record Pass(List<Promoted> promoted, Set<String> passedBy, long taken) {}

    /** Tenants passed by, per queue, and when ({@link System#nanoTime()}). */
    private record PassedBy(Set<String> tenants, long atNanos) {}

    private final Map<String, PassedBy> passedBy = new ConcurrentHashMap<>();

    /**
     * Promotes up to {@code limit} due jobs of {@code queue} per pass (see the class), each pass in a
     * transaction of its own that also, for every tenant promoted, releases what its cap allows of its held
     * jobs and sorts its prioritised jobs in (its row is locked there, by the earlier statement).
     *
     * @return how many jobs became queued
     * @throws DataAccessException as a statement failed, but for a lock wait that timed out
     */
    int promote(DSLContext dsl, String queue, int limit) {
        return promote(dsl, queue, limit, LockWait.MAX_MS, SKIPPING_PASSES);
    }

    /**
     * As {@link #promote(DSLContext, String, int)}, waiting up to {@code waitMs} for each row first (0: never).
     * {@code waitMs} 0 and {@code skippingPasses} 1 are the deliberately wrong variants its tests run against
     * (a held tenant starved; the others held back).
     */
    int promote(DSLContext dsl, String queue, int limit, int waitMs, int skippingPasses) {
        Set<String> leftOut = recentlyPassedBy(queue);
        if (waitMs > 0) {
            Integer queued = waitingPass(dsl, queue, limit, waitMs, leftOut);
            if (queued != null) return queued;
        }
        int queued = 0;
        Set<String> skipped = new TreeSet<>(leftOut);
        for (int i = 0; i < skippingPasses; i++) {
            Set<String> out = Set.copyOf(skipped);
            int[] n = new int[1];
            Pass p = dsl.transactionResult(cfg -> {
                Pass pass = pass(cfg.dsl(), FairTags.PROMOTE_SKIPPING, queue, limit, out);
                n[0] = queued(cfg.dsl(), pass, queue);
                return pass;
            });
            queued += n[0];
            skipped.addAll(p.passedBy());
            if (p.passedBy().isEmpty() || p.taken() < limit) break;
        }
        if (skipped.isEmpty()) passedBy.remove(queue);
        else passedBy.put(queue, new PassedBy(Set.copyOf(skipped), System.nanoTime()));
        return queued;
    }

    private Set<String> recentlyPassedBy(String queue) {
        PassedBy p = passedBy.get(queue);
        return p != null && System.nanoTime() - p.atNanos() < REMEMBERED.toNanos() ? p.tenants() : Set.of();
    }

    /**
     * The pass that waits for held tenant rows, up to {@code waitMs} each, leaving {@code leftOut} out: the jobs
     * it queued, or null if a row stayed held longer (its transaction rolled back).
     */
    private static Integer waitingPass(DSLContext dsl, String queue, int limit, int waitMs, Set<String> leftOut) {
        try {
            return dsl.transactionResult(cfg -> {
                LockWait.limit(cfg.dsl(), waitMs);
                return queued(cfg.dsl(), pass(cfg.dsl(), FairTags.PROMOTE, queue, limit, leftOut), queue);
            });
        } catch (DataAccessException e) {
            if (!LockWait.ranOut(e)) throw e;
            return null;
        }
    }

    private static Pass pass(DSLContext tx, String statement, String queue, int limit, Set<String> leftOut) {
        List<Promoted> promoted = new ArrayList<>();
        Set<String> passedBy = new TreeSet<>();
        long taken = 0;
        for (Record r : tx.resultQuery(JobqSchema.of(tx).sql(statement), val(limit, SQLDataType.INTEGER), queue,
                leftOut.toArray(String[]::new))) {
            String tenant = r.get(1, String.class);
            taken += r.get(7, Long.class);
            if (Boolean.TRUE.equals(r.get(6, Boolean.class))) {
                promoted.add(new Promoted(tenant, r.get(2, Long.class), r.get(3, Long.class), r.get(5, Integer.class)));
            } else {
                passedBy.add(tenant);
            }
        }
        return new Pass(promoted, passedBy, taken);
    }

    /** The jobs {@code pass} queued, with those released after it for the gated tenants it promoted. */
    private static int queued(DSLContext tx, Pass pass, String queue) {
        int n = 0;
        for (Promoted t : pass.promoted()) {
            n += (int) (t.promoted() - t.held());
            if (t.held() > 0) n += TenantCaps.release(tx, queue, t.tenant());
            TenantPriority.reorder(tx, queue, t.tenant(), t.topPriority());
        }
        return n;
    }
}
