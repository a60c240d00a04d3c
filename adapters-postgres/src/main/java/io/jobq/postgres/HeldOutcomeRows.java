package io.jobq.postgres;

import io.jobq.application.port.FencedWrite;
import io.jobq.application.port.OutcomeWrite;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The jobs whose outcome found their row held by another transaction for longer than a lock wait lately, one
 * set per store. The claim loop's outcomes wait for a held row up to {@link LockWait#MAX_MS} (a claim that
 * just re-checked the row, a heartbeat: a millisecond or so); a row held longer (an application's open
 * transaction cancelling the job) is remembered here for {@link #REMEMBERED_MS} ms, and a flush with one of
 * these jobs skips held rows at once instead of waiting again, so it holds back the outcomes beside it once,
 * not every time it is written again.
 *
 * <p>Only a call whose wait ran out adds jobs: a flush that skipped at once because of one remembered job
 * finds the others of its batch held for a moment as often as not, and remembering those would keep skipping
 * for good. Thread-safe. Bounded: at most about {@link #MOST} jobs; past that, the expired ones are dropped,
 * and if that is not enough, all (a forgotten job only waits once more).
 */
final class HeldOutcomeRows {
    /** How long a job is remembered after its row was found held, in ms. */
    static final long REMEMBERED_MS = 1000;
    /** The most jobs remembered at once. */
    static final int MOST = 10_000;

    /** job id → System.nanoTime() until which it is remembered. */
    private final Map<Long, Long> until = new ConcurrentHashMap<>();

    /**
     * Takes in a call's answers: a write answered held is remembered from now if {@code afterRunOut} (the call
     * had waited for a row until its lock wait ran out), else only kept if it was remembered already; a write
     * applied or rejected is forgotten.
     */
    void update(List<FencedWrite> answers, boolean afterRunOut) {
        long end = System.nanoTime() + REMEMBERED_MS * 1_000_000;
        for (FencedWrite a : answers) {
            switch (a) {
                case FencedWrite.Held h -> {
                    long id = h.presented().job().value();
                    if (afterRunOut) {
                        if (until.size() >= MOST) makeRoom();
                        until.put(id, end);
                    } else {
                        until.computeIfPresent(id, (k, v) -> end);
                    }
                }
                case FencedWrite.Applied applied -> until.remove(applied.job().id().value());
                case FencedWrite.Rejected rejected -> until.remove(rejected.presented().job().value());
            }
        }
    }

    /** Whether any of {@code writes}' jobs is remembered as held (within the last {@link #REMEMBERED_MS} ms). */
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

    private void makeRoom() {
        long now = System.nanoTime();
        until.values().removeIf(end -> end - now <= 0);
        if (until.size() >= MOST) until.clear(); // held rows by the thousands within a second: start over
    }
}
