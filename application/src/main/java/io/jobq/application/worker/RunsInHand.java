package io.jobq.application.worker;

import io.jobq.domain.lease.FencingToken;
import java.time.Duration;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The runs a worker holds and its execution slots. {@link ClaimedAhead} takes a slot per run it starts,
 * and starts one whenever a slot is given back ({@link #onSlotFreed}). A run gives its slot back exactly once: as soon as its
 * handler has returned and its outcome is handed over ({@link #handlerReturned}), so the claim that refills
 * the slot carries that outcome (see {@link OutcomeBatcher}), or when it ends ({@link #end}) if it never got that far.
 * At most {@code slots} handlers therefore run at once; a run still writing its outcome is held (and
 * heartbeated) until it ends, and at most {@code writing} such runs are held beside the running ones, so a
 * slow store cannot make runs pile up. The lease keeper heartbeats {@link #all()}; shutdown waits for every
 * run to end.
 */
final class RunsInHand {
    private final int slots;
    private final int holdable;
    /** Execution slots: one per handler running. */
    private final Semaphore free;
    /** Runs held, running or writing their outcome: at most {@code slots + writing}. */
    private final Semaphore held;
    private final AtomicInteger running = new AtomicInteger();
    private final Map<FencingToken, Run> runs = new ConcurrentHashMap<>();
    private final WakeSignal freed;
    /** Called on the freeing thread whenever a slot is given back: starts a job waiting for one. */
    private volatile Runnable slotFreed = () -> {};
    /** Tokens of runs let go with their lease possibly still this worker's, oldest first; see {@link #letGo}. */
    private final Set<FencingToken> letGo = Collections.synchronizedSet(Collections.newSetFromMap(
            new LinkedHashMap<>(16, 0.75f, false) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<FencingToken, Boolean> eldest) {
                    return size() > LET_GO_REMEMBERED;
                }
            }));

    /**
     * How many let-go tokens are remembered: 10,000. Older ones are moot: a lease nobody heartbeats lapses
     * within one lease and is reaped, long before 10,000 more runs were let go.
     */
    static final int LET_GO_REMEMBERED = 10_000;

    /**
     * @param writing how many runs may be writing their outcomes beside the running ones: as many as one
     *     write of outcomes takes ({@link WorkerSettings#outcomeBatchSize()}), at least the slots, so that
     *     the runs of a worker with few slots, whose handlers return in microseconds, are not held back by
     *     the commit of their outcomes; bounded, so that a slow store cannot make runs pile up
     * @param freed signalled whenever a slot frees, so the claim loop can claim again at once
     */
    RunsInHand(int slots, int writing, WakeSignal freed) {
        this.slots = slots;
        this.holdable = slots + Math.max(slots, writing);
        this.free = new Semaphore(slots);
        this.held = new Semaphore(holdable);
        this.freed = freed;
    }

    /** Sets what is called, on the freeing thread, whenever a slot is given back ({@link ClaimedAhead#dispatch}). */
    void onSlotFreed(Runnable action) {
        this.slotFreed = action;
    }

    /** How many runs may start now: free slots, unless too many runs are still writing their outcomes. */
    int freeSlots() {
        return Math.min(free.availablePermits(), held.availablePermits());
    }

    /** Takes a slot; false when none is free (only after shutdown has taken them all, see {@link #awaitAllFree}). */
    boolean takeSlot() {
        if (!held.tryAcquire()) return false;
        if (free.tryAcquire()) {
            running.incrementAndGet();
            return true;
        }
        held.release();
        return false;
    }

    /** Gives back a slot taken for a run that never started. */
    void returnSlot() {
        free.release(); // before the count drops: see running()
        running.decrementAndGet();
        held.release();
        slotFreed.run();
    }

    /**
     * How many handlers are running now: runs whose outcome is still to come. A slot is given back before
     * the count drops, so whoever sees the count at 0 and then reads {@link #freeSlots} sees every slot back.
     */
    int running() {
        return running.get();
    }

    /**
     * The run's handler has returned (its outcome is about to be written): its slot is given back, so the
     * claim loop can start the next run while the outcome commits. The run stays held until {@link #end}.
     */
    void handlerReturned(Run run) {
        if (run.slotReturned.compareAndSet(false, true)) {
            free.release(); // before the count drops: see running()
            running.decrementAndGet();
            freed.signal();
            slotFreed.run();
        }
    }

    void add(Run run) {
        runs.put(run.token, run);
    }

    Run get(FencingToken token) {
        return runs.get(token);
    }

    /** Whether {@code token}'s run is held (running, or recording its outcome). */
    boolean holds(FencingToken token) {
        return runs.containsKey(token);
    }

    int size() {
        return runs.size();
    }

    /** A snapshot of the runs held now. */
    Collection<Run> all() {
        return List.copyOf(runs.values());
    }

    /**
     * Remembers that this worker let {@code token}'s run go while the store may still lease it to this
     * worker (its outcome could not be written; or an earlier process with this worker id left it), so the
     * claim loop never adopts it as a lost claim: its attempt may have run already.
     */
    void letGo(FencingToken token) {
        letGo.add(token);
    }

    boolean wasLetGo(FencingToken token) {
        return letGo.contains(token);
    }

    /**
     * The run is over: it leaves the heartbeat and its slot, if {@link #handlerReturned} did not give it
     * back already, is given back. Called exactly once per run.
     */
    void end(Run run) {
        runs.remove(run.token);
        if (run.slotReturned.compareAndSet(false, true)) {
            free.release(); // before the count drops: see running()
            running.decrementAndGet();
        }
        held.release();
        freed.signal();
        slotFreed.run();
    }

    /**
     * Waits up to {@code timeout} until every run has ended and then keeps every slot, so that no run can
     * start afterwards.
     *
     * @return whether all were free in time
     */
    boolean awaitAllFree(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        if (!held.tryAcquire(holdable, timeout.toNanos(), TimeUnit.NANOSECONDS)) return false;
        // Every run has ended, so every slot is back: this cannot wait.
        return free.tryAcquire(slots, Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    }
}
