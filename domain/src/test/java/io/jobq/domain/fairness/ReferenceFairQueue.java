package io.jobq.domain.fairness;

import io.jobq.domain.tenant.TenantId;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeSet;

/**
 * An in-memory reference model of ONE queue of the jobs table, as the PostgreSQL store will run
 * it (architecture.md, "Fair scheduling"): the {@code tenants} rows of that queue (weight and
 * {@code last_vtime}) and its jobs that are scheduled or queued. It exists so the fairness
 * consequences of {@link FairQueue#startTag} can be tested without a database, and so the store's
 * own tests can later be compared against the same scenarios.
 *
 * <ul>
 *   <li>Ids grow with insertion, like the {@code bigint} identity column; a delayed job gets its id
 *       when it is inserted, but its tag only when it is promoted.
 *   <li>When a job becomes runnable its tag is {@code FairQueue.startTag(V, L, weight)}, where V is
 *       the lowest queued tag or, if nothing is queued, the highest tag handed out so far in this
 *       queue (never 0: a tenant arriving at an empty queue must not bank credit).
 *   <li>{@link ClaimOrder#FAIR} claims the lowest (tag, id) — the store's {@code ORDER BY vtime, id};
 *       {@link ClaimOrder#FIFO} claims the lowest id — the store's FIFO setting, used by the
 *       benchmarks, and here to show that each fairness scenario can fail. Tags are assigned the
 *       same way under both orders, as the store does: only the {@code ORDER BY} differs.
 * </ul>
 *
 * Running jobs, completion and leases are not modelled: a claimed job leaves the queue and no
 * longer affects V. Single-threaded; not a fake {@code JobStore}.
 */
final class ReferenceFairQueue {

    /** How {@link #claim()} picks the next job. */
    enum ClaimOrder { FAIR, FIFO }

    /** A job of this queue: its id, tenant, and start tag (NaN while it is still scheduled). */
    record Job(long id, TenantId tenant, double tag) {}

    private static final Comparator<Job> BY_TAG_THEN_ID =
            Comparator.comparingDouble(Job::tag).thenComparingLong(Job::id);
    private static final Comparator<Job> BY_ID = Comparator.comparingLong(Job::id);

    private final ClaimOrder order;
    private final Map<TenantId, TenantWeight> weights = new HashMap<>();
    private final Map<TenantId, Double> lastTags = new HashMap<>();
    private final Map<Long, TenantId> scheduled = new HashMap<>();
    /** Always ordered by (tag, id): its first element is V, whatever the claim order. */
    private final NavigableSet<Job> queuedByTag = new TreeSet<>(BY_TAG_THEN_ID);
    private final NavigableSet<Job> queuedById = new TreeSet<>(BY_ID);
    private long nextId = 1;
    private double highestTagHandedOut = 0;

    ReferenceFairQueue(ClaimOrder order) {
        this.order = Objects.requireNonNull(order, "order");
    }

    /** Sets a tenant's weight (default {@link TenantWeight#DEFAULT}); like {@code PUT /tenants/{t}}. */
    ReferenceFairQueue weight(String tenant, double weight) {
        weights.put(TenantId.of(tenant), TenantWeight.of(weight));
        return this;
    }

    /** Enqueues {@code n} runnable jobs for {@code tenant}, in order; returns them with their tags. */
    List<Job> enqueue(String tenant, int n) {
        List<Job> jobs = new ArrayList<>(n);
        for (int i = 0; i < n; i++) jobs.add(makeRunnable(nextId++, TenantId.of(tenant)));
        return jobs;
    }

    /** Inserts a delayed job: it takes an id now but gets no tag and cannot be claimed until {@link #promote}. */
    long enqueueDelayed(String tenant) {
        long id = nextId++;
        scheduled.put(id, TenantId.of(tenant));
        return id;
    }

    /** The due job {@code id} becomes runnable: it gets a fresh tag now (maintenance's promotion). */
    Job promote(long id) {
        TenantId tenant = scheduled.remove(id);
        if (tenant == null) throw new IllegalArgumentException("job " + id + " is not scheduled");
        return makeRunnable(id, tenant);
    }

    /** Claims the next job in this queue's claim order, if any is queued. */
    Optional<Job> claim() {
        NavigableSet<Job> source = order == ClaimOrder.FAIR ? queuedByTag : queuedById;
        Job next = source.pollFirst();
        if (next == null) return Optional.empty();
        (order == ClaimOrder.FAIR ? queuedById : queuedByTag).remove(next);
        return Optional.of(next);
    }

    /** Claims up to {@code n} jobs, one at a time, and returns them in claim order. */
    List<Job> claim(int n) {
        List<Job> claimed = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            Optional<Job> job = claim();
            if (job.isEmpty()) break;
            claimed.add(job.get());
        }
        return claimed;
    }

    /** Claims every queued job, in claim order. */
    List<Job> claimAll() {
        return claim(queuedByTag.size());
    }

    /** V: the lowest queued tag, or the highest tag handed out so far when nothing is queued. */
    double virtualTime() {
        return queuedByTag.isEmpty() ? highestTagHandedOut : queuedByTag.first().tag();
    }

    /** How many jobs are queued (runnable, not yet claimed). */
    int queuedCount() {
        return queuedByTag.size();
    }

    /** How many of {@code tenant}'s jobs are queued. */
    long queuedCount(String tenant) {
        TenantId id = TenantId.of(tenant);
        return queuedByTag.stream().filter(j -> j.tenant().equals(id)).count();
    }

    private Job makeRunnable(long id, TenantId tenant) {
        // V is read before the new job joins the queue. Within one tenant's batch it makes no
        // difference: from the second job on, L (the batch's previous tag) is above every queued tag.
        double tag = FairQueue.startTag(virtualTime(), lastTags.getOrDefault(tenant, 0.0),
                weights.getOrDefault(tenant, TenantWeight.DEFAULT));
        lastTags.put(tenant, tag);
        highestTagHandedOut = Math.max(highestTagHandedOut, tag);
        Job job = new Job(id, tenant, tag);
        queuedByTag.add(job);
        queuedById.add(job);
        return job;
    }
}
