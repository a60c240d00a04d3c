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

/**
 * The runs a worker holds and its execution slots. The claim loop takes a slot per run it starts and
 * asks for no more jobs than there are free slots; a run gives its slot back exactly once, when it ends
 * ({@link #end}). The lease keeper heartbeats {@link #all()}; shutdown waits for every slot to come back.
 */
final class RunsInHand {
    private final int slots;
    private final Semaphore free;
    private final Map<FencingToken, Run> runs = new ConcurrentHashMap<>();
    private final WakeSignal freed;
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

    /** @param freed signalled whenever a slot frees, so the claim loop can claim again at once */
    RunsInHand(int slots, WakeSignal freed) {
        this.slots = slots;
        this.free = new Semaphore(slots);
        this.freed = freed;
    }

    int freeSlots() {
        return free.availablePermits();
    }

    /** Takes a slot; false when none is free (only after shutdown has taken them all, see {@link #awaitAllFree}). */
    boolean takeSlot() {
        return free.tryAcquire();
    }

    /** Gives back a slot taken for a run that never started. */
    void returnSlot() {
        free.release();
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

    /** The run is over: it leaves the heartbeat and its slot is given back. Called exactly once per run. */
    void end(Run run) {
        runs.remove(run.token);
        free.release();
        freed.signal();
    }

    /**
     * Waits up to {@code timeout} until every slot is free (every run has ended) and then keeps them all,
     * so that no run can start afterwards.
     *
     * @return whether all were free in time
     */
    boolean awaitAllFree(Duration timeout) throws InterruptedException {
        return free.tryAcquire(slots, timeout.toNanos(), TimeUnit.NANOSECONDS);
    }
}
