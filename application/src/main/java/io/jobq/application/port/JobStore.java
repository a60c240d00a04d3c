package io.jobq.application.port;

import io.jobq.domain.fairness.Fairness;
import io.jobq.domain.fairness.TenantWeight;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.JobState;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.lease.FencingToken;
import io.jobq.domain.lease.WorkerId;
import io.jobq.domain.retry.RetryDecision;
import io.jobq.domain.tenant.TenantId;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * All of jobq's persistence. Every time that decides a job's fate (run_at, lease expiry, backoff
 * due) is taken from the store's clock (the database's {@code now()}), never the caller's.
 *
 * <p>A store decides nothing about retries: after a failed or expired attempt it writes exactly the
 * {@link RetryDecision} it is given (the domain's {@link io.jobq.domain.retry.RetryPolicy} makes it),
 * {@link RetryDecision.RetryAfter} as scheduled at its own {@code now() + delay}, {@link RetryDecision.Dead}
 * as dead now.
 *
 * <p>Every method may throw {@link StoreUnavailableException} when the store cannot be reached,
 * and {@link JobQueueException} for any other infrastructure failure. A write that throws has
 * changed nothing (each method commits its write at once, in one transaction or one statement; an enqueue
 * that left jobs held under a cap may release them in a second, whose failure only leaves them held for
 * maintenance and never fails the enqueue), with one exception no store can avoid: when the connection is
 * lost while the write commits (its answer never arrives), the write may have happened. An enqueue with an
 * idempotency key can be retried safely after any failure. Cron schedules' part is {@link ScheduleStore}'s.
 */
public interface JobStore extends ScheduleStore, ApiKeyStore {

    /**
     * Enqueues one job. Runnable now (zero delay): queued with the tenant's next fair start tag, and
     * idle workers of its queue are woken when the transaction commits. Positive delay: scheduled
     * at {@code now() + delay}; its start tag is assigned when it is promoted.
     *
     * <p><b>Priority</b> reorders the tenant's own jobs only. After an enqueue with priority p, the tenant's
     * queued jobs from its first one of lower priority than p onwards take their tags again in order of
     * priority (then of their tags): the new job runs ahead of every job of lower priority, behind every
     * one of equal or higher priority, and the tenant's set of tags, which is all that other tenants see,
     * is exactly what the enqueue makes without priority, so the tenant gets no more turns than before.
     * It costs one update of the jobs that move, at most {@link #PRIORITY_REORDER_LIMIT}; jobs another
     * transaction holds stay where they are. Held jobs (a cap, a work queue's window) are released highest
     * priority first. Promotion (a delayed job, a retry after backoff) and {@link #retryDead} sort a job
     * with priority in the same way.
     *
     * @return {@link EnqueueResult.Created}, or {@link EnqueueResult.Existing} with the original job
     *     when the tenant already used {@code job.idempotencyKey()}; in that case nothing was written
     *     and the tenant was not charged virtual time
     */
    EnqueueResult enqueue(NewJob job);

    /**
     * Enqueues 1..1,000 jobs of one tenant in one INSERT; they get consecutive start tags in list
     * order. All or nothing.
     *
     * @return the new ids in payload order
     */
    List<JobId> enqueueBatch(NewJobBatch batch);

    /**
     * Claims up to {@code req.limit()} queued jobs, lowest start tag first (by the store's claim
     * order), leased to {@code req.worker()} until {@code now() + req.leaseFor()}. Each claim
     * increments the job's attempts. Jobs locked by a concurrent claimer are skipped, not waited on.
     *
     * <p>A claimed row the store cannot hand out (a stored value the domain refuses, or one the store cannot
     * read back) is quarantined: it ends dead, with a {@code last_error} starting {@code "quarantined: "} that
     * says why, and the rest of the claim is returned.
     *
     * @return 0..limit running jobs in claim order, each carrying its lease; use
     *     {@link Job#fencingToken()} for later writes
     */
    List<Job> claim(ClaimRequest req);

    /**
     * Marks the run {@code token} done with an optional JSON result. The run is done whatever the result
     * holds: NUL and lone surrogates in it are replaced by U+FFFD; a result over {@value #MAX_RESULT_BYTES}
     * bytes, or one the database refuses outright (a number beyond its range), is not stored, and
     * {@code last_error} says why.
     *
     * @param resultJson JSON text; text the database cannot store (a NUL) is sanitised, never refused
     * @return {@link FencedWrite.Applied} with the done job, {@link FencedWrite.Rejected} when the
     *     row no longer carries the token, or {@link FencedWrite.Held} when another transaction holds the row
     *     (nothing changed; write again later)
     */
    FencedWrite complete(FencingToken token, Optional<String> resultJson);

    /**
     * Records a failed run as {@code decision} says, whatever attempts the job has left:
     * {@link RetryDecision.RetryAfter} → scheduled at the store's {@code now() + delay} (counted from the
     * failure, not from the job's earlier run_at); {@link RetryDecision.Dead} → dead, finished now.
     *
     * @param error the failure message; sanitised (no NUL, valid UTF-16) and bounded to
     *     {@value #MAX_ERROR_BYTES} UTF-8 bytes with a truncation marker, never refused
     * @param decision what becomes of the job, as the domain's retry policy decided it
     * @return {@link FencedWrite.Applied} with the scheduled or dead job, {@link FencedWrite.Rejected}, or
     *     {@link FencedWrite.Held} (as for {@link #complete})
     */
    FencedWrite fail(FencingToken token, String error, RetryDecision decision);

    /**
     * Writes several runs' outcomes at once, each fenced by its own token exactly as {@link #complete} and
     * {@link #fail} fence one: a stale token is {@link FencedWrite.Rejected} and a row another transaction
     * holds is {@link FencedWrite.Held}, each changing nothing, while the others apply. A store that can
     * commits them all in one transaction (PostgreSQL: one statement), so a busy worker pays one commit per
     * batch instead of one per job; this default writes them one by one.
     *
     * @param writes 0..n outcomes of distinct runs (no job twice)
     * @return one answer per write, in the order of {@code writes}
     * @throws IllegalArgumentException if a job appears twice
     */
    default List<FencedWrite> recordOutcomes(List<OutcomeWrite> writes) {
        OutcomeWrite.requireDistinctJobs(writes);
        List<FencedWrite> out = new java.util.ArrayList<>(writes.size());
        for (OutcomeWrite w : writes) {
            out.add(switch (w) {
                case OutcomeWrite.Complete c -> complete(c.token(), c.resultJson());
                case OutcomeWrite.Fail f -> fail(f.token(), f.error(), f.decision());
            });
        }
        return out;
    }

    /**
     * Records {@code writes} exactly as {@link #recordOutcomes} does and then claims exactly as
     * {@link #claim} does, in one transaction where the store can (PostgreSQL: two statements in one transaction), so that a
     * worker whose runs end and whose slots refill pays one commit and one round trip for both. The claim
     * may not see what the outcomes changed (a job retried at once waits for a later claim).
     *
     * <p>When it throws, either part may have committed, as when either call alone throws after its
     * commit: a caller tries the outcomes again (their fences make that safe) and asks the store for the
     * runs leased to it ({@link #runsLeasedTo}). This default makes the two calls one after the other.
     *
     * @param writes 0..n outcomes of distinct runs (no job twice)
     * @throws IllegalArgumentException if a job appears twice
     */
    default OutcomesThenClaim recordOutcomesThenClaim(List<OutcomeWrite> writes, ClaimRequest req) {
        List<FencedWrite> answers = recordOutcomes(writes);
        return new OutcomesThenClaim(answers, claim(req));
    }

    /**
     * Whether {@link #recordOutcomesThenClaim} makes both in one transaction, so that a worker's claims should
     * carry its runs' outcomes. When false a writer thread of the worker writes them (those waiting, up to its
     * outcome batch size, in one {@link #recordOutcomes} call) beside its claims, which then overlap instead of
     * following one another.
     * Default: true.
     */
    default boolean claimsCarryOutcomes() {
        return true;
    }

    /** Largest stored result, in UTF-8 bytes of JSON text (1 MiB, the API's default body limit). */
    int MAX_RESULT_BYTES = 1024 * 1024;

    /** Longest stored {@code last_error}, in UTF-8 bytes (8 KiB). */
    int MAX_ERROR_BYTES = 8192;

    /**
     * Extends, in one statement, the lease of every run in {@code tokens} that still holds it, to
     * {@code now() + leaseFor}. A run whose row another transaction holds at that moment (a cancel in an
     * application's open transaction) is not waited for: while its lease has not run out it is neither
     * extended nor lost, and the next heartbeat extends it, so one held row never holds back the other runs'
     * leases; one whose lease ran out is lost. (The worker counts such a held run's lease as extended from
     * this beat, ahead of the store's: should the other transaction keep the row past the store's lease and
     * then let go, a reaper may take the run before the next beat reports it lost.)
     *
     * @return the tokens whose run no longer holds its lease (reaped, re-claimed, finished); empty when all were extended
     */
    Set<FencingToken> heartbeat(Collection<FencingToken> tokens, Duration leaseFor);

    /**
     * Gives back runs that were claimed but never started (a worker that claims ahead of its free slots,
     * see {@code WorkerSettings.prefetch}, is shutting down): each run still holding its lease under its
     * token goes back to queued as if that claim had not happened, its {@code attempts} one lower and its
     * fair tag kept (it was charged when enqueued), so it is claimed next; one whose job was cancelled
     * meanwhile ends cancelled. A stale token changes nothing. Only the claimer may call this, and only
     * for runs whose handler never ran: the attempt number is handed out again.
     *
     * @param tokens 0..n runs, distinct
     * @return how many runs were given back (stale tokens are not counted)
     */
    int release(Collection<FencingToken> tokens);

    /**
     * The running jobs whose lease {@code worker} holds, any attempt, oldest claim first. A worker asks after
     * a claim failed in a way that may have committed (its answer lost with the connection), to find the
     * runs it was given but never started, and at start, to know which runs an earlier process with its
     * worker id left. A row that cannot be read is left out (its lease decides its fate).
     *
     * @param limit at most this many, 1..100,000
     * @return 0..limit running jobs, each carrying its lease
     */
    List<Job> runsLeasedTo(WorkerId worker, int limit);

    /**
     * Reaps up to {@code limit} running jobs whose lease has expired (oldest expiry first), each as
     * {@code decider} decides from its attempt and max attempts. Safe to run from many workers at once:
     * each run is reaped once, with the decision made for it. The reaped attempt counts: {@code attempts}
     * is not reset. {@code last_error} names the expired lease, its owner and the attempt: "lease expired:
     * worker w1 did not finish attempt 2 of 5 before its lease ran out at …". If {@code decider} throws,
     * the call fails and the batch it was deciding for is left running.
     *
     * @return how many jobs were reaped
     */
    int reapExpiredLeases(int limit, ExpiredLeaseDecider decider);

    /**
     * Promotes scheduled jobs whose {@code run_at} has passed to queued, each with a fresh fair start tag:
     * up to {@code limit} per queue, oldest first. Queue by queue, so a queue whose promotion fails (a row
     * the store cannot update) is skipped while the others are promoted. Safe to run from many workers at
     * once (no deadlock, each job promoted once).
     *
     * @return how many jobs were promoted, over all queues
     */
    int promoteDue(int limit);

    /** Requeues a dead job with a fresh fair start tag and a fresh budget of {@code max_attempts} attempts. */
    RetryResult retryDead(JobId id);

    /**
     * Cancels a job. Scheduled, queued or held: cancelled at once, never claimed (a capped or work-queue
     * tenant's slot frees as when a run ends). Running: {@code cancel_requested} is set and the job stays
     * running until its run ends; a run that then fails (or whose lease expires) makes it cancelled, never
     * retried; one that succeeds makes it done, its result kept. Done or dead: nothing changes.
     */
    CancelResult cancel(JobId id);

    /**
     * Which of these runs have had cancelling requested: the subset of {@code tokens} whose job is still
     * running under that token with {@code cancel_requested} set. Workers ask with each heartbeat.
     */
    Set<FencingToken> cancelRequested(Collection<FencingToken> tokens);

    /**
     * Changes a tenant's settings in a queue, creating the tenant if needed, in one transaction.
     * <ul>
     *   <li>A weight applies to start tags handed out afterwards; jobs already queued keep theirs.</li>
     *   <li>A cap ({@code max_running}) holds the tenant's jobs beyond it: at no instant are more than the
     *       cap of its jobs in the queue queued or running together, so no more than that run, across every
     *       worker. Setting or lowering it holds queued jobs beyond it (the newest tags first; running jobs
     *       are never stopped, so until enough of them end more may still be running than the new cap);
     *       raising or removing it releases held jobs at once, oldest first, with fresh start tags.</li>
     * </ul>
     *
     * @return the tenant's settings after the change
     */
    TenantSettings configureTenant(TenantUpdate update);

    /**
     * Sets what a queue charges its tenants for, creating its settings if needed. {@link Fairness#WORK}
     * charges a job its measured run time (in milliseconds, at least {@value #MIN_CHARGED_MS}) divided by
     * its tenant's weight: tags are assigned from the tenant's moving average of run times in the queue and
     * corrected by each run's measured time when its outcome is recorded ({@link OutcomeWrite#ran}). So
     * that corrections reach a tenant's backlog before it runs, a work queue tags at most
     * {@value #WORK_WINDOW} of a tenant's jobs ahead (queued); the rest wait as held, as jobs beyond a cap
     * do, and are tagged as the tenant's runs end. The change applies to tags handed out afterwards; jobs
     * already queued keep theirs. The retention applies from the next maintenance pass
     * ({@link #deleteFinished}).
     *
     * @return the queue's settings after the change
     */
    QueueSettings configureQueue(QueueUpdate update);

    /** {@link #configureQueue(QueueUpdate)} changing the fairness only. */
    default QueueSettings configureQueue(QueueName queue, Fairness fairness) {
        return configureQueue(QueueUpdate.fairness(queue, fairness));
    }

    /**
     * A worker is alive: records (upserts) what it serves and runs, now, and that it will say so again
     * every {@code beat}; it counts as live until three of those have passed unheard. Also forgets workers
     * unheard of for a day.
     */
    void workerAlive(WorkerId id, Collection<QueueName> queues, Collection<TaskName> tasks, Duration beat);

    /** A worker stopped: it is no longer live. */
    void workerGone(WorkerId id);

    /** The live workers, by id, each with the number of jobs it holds running. */
    List<WorkerInfo> liveWorkers();

    /**
     * Maintenance: deletes finished jobs (done, dead, cancelled) finished longer ago than their queue's
     * {@link Retention} (never those of a state kept for ever), at most {@code limit} per queue and state,
     * oldest first, skipping rows another transaction holds.
     *
     * @return how many were deleted
     */
    int deleteFinished(int limit);

    /**
     * The most of a tenant's queued jobs one prioritised enqueue (or promotion, or retry) moves. With more
     * jobs of lower priority ahead of the new one, the first this many of them move one place on as usual
     * and the last of them take the new jobs' places at the back: the cost stays bounded, the tenant's set
     * of tags unchanged.
     */
    int PRIORITY_REORDER_LIMIT = 1000;

    /** In a work-fairness queue, the most of one tenant's jobs that are queued (tagged) at once. */
    int WORK_WINDOW = 32;

    /**
     * The least a run is charged in a work-fairness queue, in milliseconds: a job costs the queue a claim
     * and a commit however fast its handler is, and a zero charge would let a tenant's fast jobs go ahead
     * of everyone's without end.
     */
    int MIN_CHARGED_MS = 1;

    /** {@link #configureTenant} changing the weight only. */
    default TenantSettings setWeight(TenantId tenant, QueueName queue, TenantWeight weight) {
        return configureTenant(TenantUpdate.weight(tenant, queue, weight));
    }

    /**
     * The job, if it exists. Never fails on a stored value: a row holding a value the domain would refuse
     * (written before the store's rules, or around them) is still shown, as well as the store can.
     */
    Optional<Job> get(JobId id);

    /**
     * Most characters of payloads and results one {@link #list} page carries: 4 Mi (4,194,304): four jobs with a
     * payload of 1 MiB and no result, two with a result of 1 MiB as well. A page of 500 jobs of 1 MiB each would
     * be half a gigabyte in the heap of whoever asked, and a few such requests at once an {@link OutOfMemoryError}.
     */
    int LIST_PAGE_CHARS = 4 << 20;

    /** What {@code job} takes of a {@link #list} page's {@link #LIST_PAGE_CHARS}: its payload and result, in chars. */
    static long listPageChars(Job job) {
        return job.payload().length() + job.result().map(String::length).orElse(0);
    }

    /**
     * A page of jobs, newest first; like {@link #get}, never fails on a stored value. At most
     * {@code query.limit()} jobs, and it ends before the job that would take the page's payloads and results
     * (their JSON text, in chars) past {@link #LIST_PAGE_CHARS}, never before the first: a page of large
     * jobs holds fewer than the limit, and more may follow it (ask again {@code after} its last id; only an
     * empty page is the end).
     */
    List<Job> list(JobQuery query);

    /**
     * The jobs {@link #list} would show, with the same filters, order and limit, each without its payload and
     * result (cheap whatever their size); never cut short by {@link #LIST_PAGE_CHARS}.
     */
    List<JobSummary> summaries(JobQuery query);

    /**
     * Job counts by queue, then state; states with no jobs (or none seen by the sample) are omitted.
     *
     * <p>scheduled, queued, held and running are exact. done and dead are exact while the jobs table is
     * small, and ESTIMATES on a large one: a store may read them from a sample or from statistics so
     * that the call stays cheap however many finished jobs pile up (the PostgreSQL store counts exactly
     * up to 1,000 heap pages, about 50,000-100,000 jobs, and above that scales up a ~500-page block
     * sample: a few percent off, and a queue with very few finished jobs among millions may read 0).
     * Use the terminal counts for dashboards, never to decide anything.
     */
    Map<QueueName, Map<JobState, Long>> countsByQueueAndState();

    /**
     * The live part of {@link #countsByQueueAndState}: scheduled, queued, held and running, exact, at a cost that
     * grows with the live jobs only (a dashboard samples it every few seconds).
     */
    default Map<QueueName, Map<JobState, Long>> liveCountsByQueue() {
        Map<QueueName, Map<JobState, Long>> live = new java.util.LinkedHashMap<>();
        countsByQueueAndState().forEach((queue, byState) -> byState.forEach((state, n) -> {
            if (!state.isFinal()) live.computeIfAbsent(queue, q -> new java.util.EnumMap<>(JobState.class)).put(state, n);
        }));
        return live;
    }

    /** Per queue with queued jobs: how long the oldest queued job has been runnable. */
    Map<QueueName, Duration> oldestRunnableAge();

    /** Running and held jobs of up to {@code limit} capped tenants, by queue and tenant. */
    List<CapUsage> capUsage(int limit);

    /** The {@code limit} largest backlogs (queued jobs) by queue and tenant, largest first. */
    List<Backlog> largestBacklogs(int limit);

    /**
     * Every tenant of every queue (or of {@code tenant} only) with its settings and exact live counts, busiest
     * first (most queued, held and running), then by queue and tenant; at most {@code limit} rows. The cost grows
     * with the tenants and the live jobs, never with the finished ones.
     */
    List<TenantActivity> tenantActivity(Optional<TenantId> tenant, int limit);

    /**
     * Jobs that reached done, dead or cancelled per minute, queue and state, over the current minute and the
     * {@code minutes} before it (1-1,440), oldest first; of {@code tenant} only when present. Exact, and as
     * cheap as the finished jobs of those minutes (not of the whole table). Jobs already deleted by retention
     * are not counted.
     */
    List<FinishedCount> finishedPerMinute(Optional<TenantId> tenant, int minutes);

    /** One round trip to the store; throws {@link StoreUnavailableException} if it cannot be reached. */
    void ping();

    /**
     * How far cleanup of dead row versions lags on jobq's tables, and what holds it back; one round trip,
     * cheap enough for every metrics scrape.
     *
     * @return empty for a store that leaves no dead row versions behind (this default, and the in-memory fake)
     */
    default Optional<VacuumHealth> vacuumHealth() {
        return Optional.empty();
    }

    /**
     * Whether {@code worker} should run the queue's upkeep ({@link #reapExpiredLeases}, {@link #promoteDue},
     * {@link #deleteFinished}, {@link #vacuumIfNeeded}) now: true, and recorded as its turn, unless some worker
     * took a turn less than {@code gap} ago by the store's clock (or the last turn lies in the store's future,
     * after its clock was set back: then the turn is taken at once). So N workers whose periods are longer
     * than {@code gap} make about one upkeep pass a period between them, not N. Upkeep stays safe from many
     * workers at once (turns are a saving, not a lock: a pass longer than the gap overlaps the next).
     *
     * @param gap at least zero; a worker passes about three quarters of its maintenance interval, so that
     *     alone it never misses its own turn
     * @return true if this call took the turn; a store that does not share upkeep keeps this default
     */
    default boolean takeUpkeepTurn(WorkerId worker, Duration gap) {
        return true;
    }

    /**
     * The store's own cleanup, for when the database will not do it: the maintenance pass calls this
     * (about once a second, taken in turns by the workers); the store decides, cheaply and rate-limited,
     * whether anything is due. The PostgreSQL store VACUUMs a jobq table whose dead rows passed its
     * autovacuum threshold while autovacuum is off for it, one worker at a time, at most once a minute per
     * table across all workers by default.
     *
     * @return true if it cleaned up this time; false when nothing was due, another worker was at it, or
     *     cleanup is disabled or not permitted (a store that needs no cleanup keeps this default)
     */
    default boolean vacuumIfNeeded() {
        return false;
    }
}
