package io.jobq.postgres;

import io.jobq.domain.job.QueueName;
import io.jobq.domain.tenant.TenantId;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The (queue, tenant) pairs whose enqueues came back held lately (a tenant with a cap, or any tenant of a work
 * queue), so that {@link PostgresJobStore} enqueues theirs with {@link Enqueuer#insert} in one transaction,
 * releasing there, rather than with {@link Enqueuer#insertCommitted}, which would release in a second one. A
 * hint, nothing more: no enqueue is wrong for it being missing or stale (a pair it has not seen is released
 * after its statement; one kept after its cap was removed just takes the transaction). Bounded: past
 * {@link #MAX} pairs it forgets them all and learns again. Thread-safe.
 */
final class HoldingTenants {
    /** The most pairs kept; at 10,000 short names, about a megabyte. */
    static final int MAX = 10_000;

    private record Pair(String queue, String tenant) {}

    private final Set<Pair> pairs = ConcurrentHashMap.newKeySet();

    /** Whether an enqueue of this tenant in this queue came back held since the last time the set was full. */
    boolean mayHold(QueueName queue, TenantId tenant) {
        return pairs.contains(new Pair(queue.value(), tenant.value()));
    }

    /** Remembers that an enqueue of this tenant in this queue came back held. */
    void held(QueueName queue, TenantId tenant) {
        if (pairs.size() >= MAX) pairs.clear();
        pairs.add(new Pair(queue.value(), tenant.value()));
    }
}
