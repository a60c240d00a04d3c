package io.jobq.application.worker;

import io.jobq.application.port.ExpiredLeaseDecider;
import io.jobq.application.port.JobStore;
import io.jobq.application.port.StoreUnavailableException;
import io.jobq.domain.lease.WorkerId;
import io.jobq.domain.retry.RetryPolicy;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.IntUnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This worker's share of the queue's upkeep, on its own thread. About every
 * {@link WorkerSettings#maintenanceInterval()} (±20% jitter, so many workers do not wake in lockstep) it
 * asks the store for the upkeep turn ({@link JobStore#takeUpkeepTurn}, with a gap of {@value #TURN_GAP}
 * of its interval, below the jitter's least period so that a lone worker never misses its own turn), and
 * if it gets it makes one pass. Upkeep is about the whole queue, so N workers need not make N passes a
 * period between them; they make about one. A worker whose own leases may have lapsed unheard passes
 * without asking, but does not reap (below).
 * <ol>
 *   <li>{@link JobStore#reapExpiredLeases reap} runs whose lease expired (their worker crashed or froze),
 *       unless a lease of this worker's own may have lapsed unheard ({@link LeaseKeeper#ownLeasesCurrent}):
 *       then it skips reaping for one period and asks for a heartbeat, so that after a database outage the
 *       worker's heartbeat, not its own reaper, finds out whether it still holds its runs;
 *   <li>{@link JobStore#promoteDue promote} scheduled jobs that are due, and wake the claim loop if any were;
 *   <li>{@link JobStore#vacuumIfNeeded} (the store decides, rate-limited, whether cleanup is due).
 * </ol>
 * Reaping and promotion repeat while a full batch came back, at most {@value #MAX_ROUNDS} times a period.
 * A step that fails is reported and tried again next period. Concurrent maintainers are safe: the store
 * reaps and promotes each job once.
 */
final class Maintainer {
    private static final Logger log = LoggerFactory.getLogger(Maintainer.class);

    /** Most consecutive full batches one step runs before yielding to the next period. */
    static final int MAX_ROUNDS = 100;

    private final JobStore store;
    private final ExpiredLeaseDecider decider;
    private final WorkerId worker;
    private final WorkerSettings settings;
    private final LeaseKeeper leases;
    private final WakeSignal claimSignal;
    private final WorkerListener listener;
    private final ErrorReporter errors;
    private final StopLatch stop;

    /** @param retryPolicy decides, for each expired lease it reaps, between a retry and dead ({@code LEASE_EXPIRED}) */
    Maintainer(JobStore store, RetryPolicy retryPolicy, WorkerId worker, WorkerSettings settings, LeaseKeeper leases,
            WakeSignal claimSignal, WorkerListener listener, ErrorReporter errors, StopLatch stop) {
        this.store = store;
        this.decider = ExpiredLeaseDecider.by(retryPolicy);
        this.worker = worker;
        this.settings = settings;
        this.leases = leases;
        this.claimSignal = claimSignal;
        this.listener = listener;
        this.errors = errors;
        this.stop = stop;
    }

    /** The upkeep turn's gap, as a fraction of the maintenance interval (see the class comment). */
    static final double TURN_GAP = 0.75;

    /** The maintenance loop; returns once {@code stop} is thrown. */
    void loop() {
        while (!stop.pause(jittered(settings.maintenanceInterval()))) {
            if (myTurn()) pass();
        }
    }

    /**
     * Whether to pass this period. A worker whose own leases are not known to be current passes regardless:
     * it will not reap, and its pass must not use up the turn of a worker that could. An ask that fails is
     * reported; with the store unreachable the pass would fail too, so it waits for the next period, but
     * any other failure (the turn's table refused to this role, locked, dropped by hand) must not stop the
     * queue's upkeep in every worker at once: the worker passes as if it had the turn (passes are safe
     * side by side).
     */
    private boolean myTurn() {
        if (!leases.ownLeasesCurrent()) return true;
        try {
            return store.takeUpkeepTurn(worker, Duration.ofNanos((long) (settings.maintenanceInterval().toNanos() * TURN_GAP)));
        } catch (StoreUnavailableException e) {
            errors.maintenanceError("take the upkeep turn", e);
            return false;
        } catch (Throwable e) {
            errors.maintenanceError("take the upkeep turn (passing without it)", e);
            return true;
        }
    }

    /** One pass: reap, promote, delete finished jobs past retention, vacuum; reports to the listener unless a step failed. */
    void pass() {
        int reaped = 0;
        int promoted = 0;
        boolean failed = false;
        if (leases.ownLeasesCurrent()) {
            try {
                reaped = repeatWhileFull(limit -> store.reapExpiredLeases(limit, decider));
            } catch (Throwable e) {
                failed = true;
                errors.maintenanceError("reap expired leases", e);
            }
        } else {
            leases.beatSoon();
            log.atDebug().addKeyValue("worker", worker).log("maintenance: not reaping until a heartbeat confirms this"
                    + " worker's own leases");
        }
        try {
            promoted = repeatWhileFull(store::promoteDue);
        } catch (Throwable e) {
            failed = true;
            errors.maintenanceError("promote due jobs", e);
        }
        int deleted = 0;
        try {
            // finished jobs past their queue's retention, in bounded batches (one short transaction each)
            deleted = repeatWhileFull(store::deleteFinished);
        } catch (Throwable e) {
            failed = true;
            errors.maintenanceError("delete finished jobs", e);
        }
        try {
            store.vacuumIfNeeded(); // the store rate-limits itself; a no-op unless autovacuum is off
        } catch (Throwable e) {
            failed = true;
            errors.maintenanceError("vacuum jobq's tables", e);
        }
        if (promoted > 0) claimSignal.signal(); // our own claim loop can take them without waiting for a poll
        if (reaped > 0 || promoted > 0 || deleted > 0) {
            log.atDebug().addKeyValue("worker", worker).addKeyValue("reaped", reaped).addKeyValue("promoted", promoted)
                    .addKeyValue("deleted", deleted)
                    .log("maintenance: reaped {} expired lease(s), promoted {} due job(s), deleted {} finished job(s) past"
                            + " their retention", reaped, promoted, deleted);
        }
        if (!failed) {
            int r = reaped;
            int p = promoted;
            errors.notify(() -> listener.maintenance(r, p));
        }
    }

    private int repeatWhileFull(IntUnaryOperator step) {
        int limit = settings.maintenanceBatchLimit();
        int total = 0;
        for (int round = 0; round < MAX_ROUNDS && !stop.isStopped(); round++) {
            int n = step.applyAsInt(limit);
            total += n;
            if (n < limit) break;
        }
        return total;
    }

    /** {@code mean} scaled by a uniform factor in [0.8, 1.2]. */
    static Duration jittered(Duration mean) {
        return Duration.ofNanos((long) (mean.toNanos() * ThreadLocalRandom.current().nextDouble(0.8, 1.2)));
    }
}
