package io.jobq.postgres;

import io.jobq.application.port.OutcomeWrite;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The jobs whose outcome found their row held by another transaction lately, one set per store. The claim
 * loop's outcomes wait for a held row up to {@link LockWait#MAX_MS} (a claim that just re-checked the row,
 * a heartbeat: a millisecond or so); a row held longer (an application's open transaction cancelling the job)
 * is remembered here for {@link #REMEMBERED_MS} ms, and a flush with one of these jobs skips held rows at once
 * instead of waiting again, so it holds back the outcomes beside it once, not every time it is written again.
 *
 * <p>Thread-safe. Bounded: at most {@link #MOST} jobs; past that the oldest entries are dropped first (a
 * forgotten job only waits once more).
 */
final class HeldOutcomeRows {
    /** How long a job is remembered after its row was found held, in ms. */
    static final long REMEMBERED_MS = 1000;
    /** The most jobs remembered at once. */
    static final int MOST = 10_000;

    /** job id → System.nanoTime() until which it is remembered. */
    private final Map<Long, Long> until = new ConcurrentHashMap<>();

    /** Remembers {@code jobIds} as held, from now. */
    void remember(Collection<Long> jobIds) {
        if (jobIds.isEmpty()) return;
        long now = System.nanoTime();
        if (until.size() + jobIds.size() > MOST) forgetExpired(now);
        if (until.size() + jobIds.size() > MOST) until.clear(); // held rows by the thousands: start over
        long end = now + REMEMBERED_MS * 1_000_000;
        for (Long id : jobIds) until.put(id, end);
    }

    /** Whether any of {@code writes}' jobs was found held within the last {@link #REMEMBERED_MS} ms. */
    boolean anyAmong(List<OutcomeWrite> writes) {
        if (until.isEmpty()) return false;
        long now = System.nanoTime();
        for (OutcomeWrite w : writes) {
            Long end = until.get(w.token().job().value());
            if (end != null) {
                if (end - now > 0) return true;
                until.remove(w.token().job().value(), end);
            }
        }
        return false;
    }

    private void forgetExpired(long now) {
        until.values().removeIf(end -> end - now <= 0);
    }
}
