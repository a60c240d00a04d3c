package io.jobq.application.fake;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.jobq.application.port.ApiKeyStore.ApiKey;
import io.jobq.application.port.Backlog;
import io.jobq.application.port.FinishedCount;
import io.jobq.application.port.JobSummary;
import io.jobq.application.port.TenantActivity;
import io.jobq.application.port.CancelResult;
import io.jobq.application.port.ClaimRequest;
import io.jobq.application.port.EnqueueResult;
import io.jobq.application.port.ExpiredLeaseDecider;
import io.jobq.application.port.FencedWrite;
import io.jobq.application.port.JobQuery;
import io.jobq.application.port.JobStore;
import io.jobq.application.port.NewJob;
import io.jobq.application.port.Schedule;
import io.jobq.application.port.ScheduleDefinition;
import io.jobq.domain.schedule.ScheduleName;
import io.jobq.application.port.NewJobBatch;
import io.jobq.application.port.OutcomeWrite;
import io.jobq.application.port.OutcomesThenClaim;
import io.jobq.application.port.RetryResult;
import io.jobq.application.port.StoreUnavailableException;
import io.jobq.application.port.QueueSettings;
import io.jobq.application.port.QueueUpdate;
import io.jobq.application.port.Retention;
import io.jobq.application.port.TenantSettings;
import io.jobq.application.port.WorkerInfo;
import io.jobq.domain.fairness.Fairness;
import io.jobq.domain.fairness.MaxRunning;
import io.jobq.application.port.CapUsage;
import io.jobq.application.port.TenantUpdate;
import io.jobq.domain.fairness.TenantWeight;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.JobState;
import io.jobq.domain.job.JsonNumbers;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.StoredText;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.lease.FencingToken;
import io.jobq.domain.lease.Lease;
import io.jobq.domain.lease.WorkerId;
import io.jobq.domain.retry.RetryDecision;
import io.jobq.domain.tenant.TenantId;
import java.io.IOException;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * The whole {@link JobStore} port in memory, behaving as the PostgreSQL store does, for tests of
 * everything above the store. One lock guards all state, so every method is atomic like the one
 * transaction it stands for; the injected clock plays the database's {@code now()}.
 *
 * <ul>
 *   <li>Fairness: start tags {@code max(V, L) + 1/weight} as the PostgreSQL store's {@code FairTags} hands them
 *       out, with V = the lowest tag queued in the queue, or, when none is queued, the highest tag handed out
 *       in that queue (max over its tenants' last tags), and L the tenant's last tag.
 *   <li>Claim: lowest (vtime, id) first across the requested queues; increments attempts; leases until
 *       {@code now + leaseFor}.
 *   <li>complete / fail / heartbeat apply only to a running row carrying the token's (id, worker, attempt).
 *   <li>fail writes the decision it is given: {@code RetryAfter(delay)} → scheduled at {@code now + delay},
 *       {@code Dead} → dead now. Reap asks its decider about each lease with {@code expiry < now} and writes
 *       the answer the same way, {@code last_error} naming the expired lease and its owner.
 *   <li>Promotion: V is read once per pass, so jobs promoted together into an empty queue start level.
 *   <li>Error texts via {@link StoredText#sanitize}. A payload must be JSON jsonb can store (no {@code \u0000}
 *       or lone-surrogate escape), else IllegalArgumentException. A result's NUL characters and lone
 *       surrogates, raw or escaped, become U+FFFD; a result over {@link #MAX_RESULT_BYTES}, not JSON, or with a
 *       number beyond PostgreSQL's numeric range is not stored, the run is done all the same and
 *       {@code last_error} says why.
 * </ul>
 *
 * <p>Known differences: payloads and results are kept as given, not re-rendered as jsonb renders them
 * (spacing, key order, duplicate keys), so compare them as JSON values. A payload number beyond numeric's
 * range is refused here with IllegalArgumentException, as the port documents for every payload jsonb
 * refuses; the PostgreSQL store answers JobQueueException for that one case (SQLSTATE 22003 is not among
 * the states Enqueuer maps), which looks like the store's bug, not the port's intent.
 *
 * <p>{@code JobStoreContract} runs the same cases against this fake and the PostgreSQL store.
 *
 * Test hooks: {@link #setAvailable(boolean)} simulates an outage (every call throws
 * {@link StoreUnavailableException}), {@link #setAvailable(String, boolean)} one of a single method;
 * {@link #loseNextAnswer} lets a call commit and then throw; {@link #throwOnNextCall} makes one call throw what a test
 * chooses (an Error, say); {@link #gate} holds one method's calls back ({@link #waitingAtGate} counts them);
 * {@link #atomically(Supplier)} runs several steps with no other call in between; {@link #calls(String)} counts calls per method and
 * {@link #callers} names the threads that made them.
 */
public final class InMemoryJobStore implements JobStore {
    private final InstantSource clock;
    private final ReentrantLock lock = new ReentrantLock();
    private final TreeMap<Long, Row> rows = new TreeMap<>();
    private final Map<TenantKey, TenantRow> tenants = new HashMap<>();
    private final Map<QueueName, QueueSettings> queueSettings = new HashMap<>();
    private final Map<IdempotencyKey, Long> idempotency = new HashMap<>();
    private final AtomicBoolean available = new AtomicBoolean(true);
    private final Map<String, AtomicInteger> calls = new java.util.concurrent.ConcurrentHashMap<>();
    private final Map<String, Throwable> plannedFailures = new java.util.concurrent.ConcurrentHashMap<>();
    private final Set<String> lostAnswers = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final Set<String> downMethods = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final Set<Long> heldRows = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final Map<String, CountDownLatch> gates = new java.util.concurrent.ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> atGate = new java.util.concurrent.ConcurrentHashMap<>();
    private final Map<String, Set<String>> callers = new java.util.concurrent.ConcurrentHashMap<>();
    private long nextId = 1;

    /** An empty store whose {@code now()} is {@code clock}. */
    public InMemoryJobStore(InstantSource clock) {
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    // --- test hooks ---------------------------------------------------------------------------

    /** While false, every port method throws {@link StoreUnavailableException} and changes nothing. */
    public void setAvailable(boolean value) {
        available.set(value);
    }

    /**
     * The next call of {@code method} does its work and commits, then throws {@link StoreUnavailableException}
     * as if the connection failed before the answer arrived (a claim whose rows never reach the worker).
     */
    public void loseNextAnswer(String method) {
        lostAnswers.add(method);
    }

    /**
     * Calls of {@code method} wait, before they take the store's lock (other calls go on), until {@code gate}
     * opens: a slow commit of that one method. {@code null} removes the gate.
     */
    public void gate(String method, CountDownLatch gate) {
        if (gate == null) gates.remove(method);
        else gates.put(method, gate);
    }

    private static void awaitGate(CountDownLatch gate) {
        boolean interrupted = false;
        while (true) {
            try {
                gate.await();
                break;
            } catch (InterruptedException e) {
                interrupted = true; // a commit under way is not cut short by an interrupt
            }
        }
        if (interrupted) Thread.currentThread().interrupt();
    }

    /**
     * While {@code held}, an outcome write fenced on job {@code id}'s row that would apply answers
     * {@link FencedWrite.Held} and changes nothing, as PostgreSQL's does while another transaction holds the row.
     */
    public void holdRow(io.jobq.domain.job.JobId id, boolean held) {
        if (held) heldRows.add(id.value());
        else heldRows.remove(id.value());
    }

    /** While false, calls of {@code method} alone throw {@link StoreUnavailableException} and change nothing. */
    public void setAvailable(String method, boolean value) {
        if (value) downMethods.remove(method);
        else downMethods.add(method);
    }

    /**
     * The next call of {@code method} (e.g. "claim", "heartbeat", "reapExpiredLeases") throws {@code failure}
     * and changes nothing; the calls after it run normally. It counts in {@link #calls}.
     *
     * @param failure an Error or a RuntimeException
     */
    public void throwOnNextCall(String method, Throwable failure) {
        if (!(failure instanceof Error || failure instanceof RuntimeException)) {
            throw new IllegalArgumentException("a port method can only throw unchecked throwables, not " + failure);
        }
        plannedFailures.put(method, failure);
    }

    /** Runs {@code steps} holding the store's lock: no port call from another thread interleaves. */
    public <T> T atomically(Supplier<T> steps) {
        lock.lock();
        try {
            return steps.get();
        } finally {
            lock.unlock();
        }
    }

    /** How many times {@code method} (e.g. "claim", "heartbeat") was called, failed calls included. */
    public int calls(String method) {
        AtomicInteger n = calls.get(method);
        return n == null ? 0 : n.get();
    }

    /** How many calls of {@code method} wait at its {@link #gate} now. */
    public int waitingAtGate(String method) {
        AtomicInteger n = atGate.get(method);
        return n == null ? 0 : n.get();
    }

    /** The names of the threads that have called {@code method} so far. */
    public Set<String> callers(String method) {
        return Set.copyOf(callers.getOrDefault(method, Set.of()));
    }

    /**
     * The job, which must exist, read for a test's assertions: not counted in {@link #calls} and
     * not affected by a simulated outage.
     */
    public Job require(JobId id) {
        return atomically(() -> Optional.ofNullable(rows.get(id.value())).map(Row::toJob))
                .orElseThrow(() -> new AssertionError("no job " + id));
    }

    /**
     * Enqueues a runnable job whose payload the real store would refuse (not JSON, empty): no real
     * store can hold one, but a consumer's defence against a payload it cannot parse still needs a test.
     */
    public JobId enqueueUnparseable(NewJob job) {
        return atomically(() -> JobId.of(insert(job.tenant(), job.queue(), job.task(), job.payload(), job.maxAttempts(),
                Duration.ZERO, Optional.empty()).id));
    }

    // --- JobStore -----------------------------------------------------------------------------

    @Override
    public EnqueueResult enqueue(NewJob job) {
        return tx("enqueue", () -> {
            if (job.idempotencyKey().isPresent()) {
                Long existing = idempotency.get(new IdempotencyKey(job.tenant(), job.idempotencyKey().get()));
                if (existing != null) return new EnqueueResult.Existing(rows.get(existing).toJob());
            }
            requireStorablePayload(job.payload());
            Row row = insert(job.tenant(), job.queue(), job.task(), job.payload(), job.maxAttempts(), job.delay(),
                    job.idempotencyKey(), job.priority());
            reorderForPriority(job.queue(), job.tenant(), job.priority());
            job.idempotencyKey().ifPresent(k -> idempotency.put(new IdempotencyKey(job.tenant(), k), row.id));
            return new EnqueueResult.Created(row.toJob());
        });
    }

    @Override
    public List<JobId> enqueueBatch(NewJobBatch batch) {
        return tx("enqueueBatch", () -> {
            batch.payloads().forEach(InMemoryJobStore::requireStorablePayload); // all or nothing
            List<Row> inserted = new ArrayList<>();
            for (String payload : batch.payloads()) {
                inserted.add(insert(batch.tenant(), batch.queue(), batch.task(), payload, batch.maxAttempts(),
                        batch.delay(), Optional.empty(), batch.priority()));
            }
            reorderForPriority(batch.queue(), batch.tenant(), batch.priority());
            return inserted.stream().map(r -> JobId.of(r.id)).toList();
        });
    }

    @Override
    public List<Job> claim(ClaimRequest req) {
        return tx("claim", () -> {
            Instant now = clock.instant();
            Set<QueueName> queues = Set.copyOf(req.queues());
            List<Row> picked = rows.values().stream()
                    .filter(r -> r.state == JobState.QUEUED && queues.contains(r.queue))
                    .sorted(Comparator.comparingDouble((Row r) -> r.vtime).thenComparingLong(r -> r.id))
                    .limit(req.limit())
                    .toList();
            List<Job> claimed = new ArrayList<>();
            for (Row r : picked) {
                r.state = JobState.RUNNING;
                r.attempts++;
                r.lockedBy = req.worker();
                r.lockedUntil = now.plus(req.leaseFor());
                r.startedAt = now;
                claimed.add(r.toJob());
            }
            return claimed;
        });
    }

    @Override
    public FencedWrite complete(FencingToken token, Optional<String> resultJson) {
        Objects.requireNonNull(resultJson, "resultJson");
        return tx("complete", () -> completeRun(token, resultJson, Optional.empty()));
    }

    private FencedWrite completeRun(FencingToken token, Optional<String> resultJson, Optional<Duration> ran) {
        {
            Row r = holder(token);
            if (r == null) return rejected(token);
            if (heldRows.contains(token.job().value())) return new FencedWrite.Held(token);
            chargeMeasured(r, ran);
            r.state = JobState.DONE;
            r.result = Optional.empty();
            if (resultJson.isPresent()) {
                String result = StoredText.clean(resultJson.get());
                long bytes = StoredText.utf8Length(result);
                long growth = JsonNumbers.renderedGrowth(result);
                if (bytes > MAX_RESULT_BYTES) {
                    r.lastError = Optional.of("result not stored: " + bytes + " bytes of JSON exceed the cap of "
                            + MAX_RESULT_BYTES + " bytes");
                } else if (growth > JsonNumbers.MAX_RENDERED_GROWTH) {
                    r.lastError = Optional.of("result not stored: " + JsonNumbers.tooLargeMessage("it", growth));
                } else {
                    try {
                        r.result = Optional.of(storableResult(result));
                    } catch (IllegalArgumentException refused) {
                        // the real store completes the run without the result jsonb refuses, and says why
                        r.lastError = Optional.of("result not stored: the database refused it: " + refused.getMessage());
                    }
                }
            }
            r.finishedAt = clock.instant();
            r.clearLease();
            release(r.queue, r.tenant); // the run ended: its tenant may have room under its cap
            return new FencedWrite.Applied(r.toJob());
        }
    }

    @Override
    public FencedWrite fail(FencingToken token, String error, RetryDecision decision) {
        Objects.requireNonNull(error, "error");
        Objects.requireNonNull(decision, "decision");
        return tx("fail", () -> failRun(token, error, decision, Optional.empty()));
    }

    private FencedWrite failRun(FencingToken token, String error, RetryDecision decision, Optional<Duration> ran) {
        Row r = holder(token);
        if (r == null) return rejected(token);
        if (heldRows.contains(token.job().value())) return new FencedWrite.Held(token);
        chargeMeasured(r, ran);
        write(r, error, decision);
        return new FencedWrite.Applied(r.toJob());
    }

    private volatile boolean claimsCarryOutcomes = true;

    /** What {@link #claimsCarryOutcomes()} answers (test hook); default true. */
    public void setClaimsCarryOutcomes(boolean value) {
        claimsCarryOutcomes = value;
    }

    @Override
    public boolean claimsCarryOutcomes() {
        return claimsCarryOutcomes;
    }

    /**
     * Counted as "recordOutcomesThenClaim" and subject to its hooks (a lost answer loses both parts' answers,
     * as for one statement); inside, {@link #recordOutcomes} and {@link #claim} as called alone, all under one
     * lock hold.
     */
    @Override
    public OutcomesThenClaim recordOutcomesThenClaim(List<OutcomeWrite> writes, ClaimRequest req) {
        return tx("recordOutcomesThenClaim", () -> new OutcomesThenClaim(recordOutcomes(writes), claim(req)));
    }

    /**
     * Counted as "recordOutcomes" and subject to its hooks; each write inside is then the matching
     * {@link #complete} or {@link #fail} (their hooks apply too), all under one lock hold.
     */
    @Override
    public List<FencedWrite> recordOutcomes(List<OutcomeWrite> writes) {
        return tx("recordOutcomes", () -> {
            OutcomeWrite.requireDistinctJobs(writes);
            List<FencedWrite> out = new ArrayList<>(writes.size());
            for (OutcomeWrite w : writes) {
                out.add(switch (w) {
                    case OutcomeWrite.Complete c -> tx("complete", () -> completeRun(c.token(), c.resultJson(), c.ran()));
                    case OutcomeWrite.Fail f -> tx("fail", () -> failRun(f.token(), f.error(), f.decision(), f.ran()));
                });
            }
            return out;
        });
    }

    @Override
    public Set<FencingToken> heartbeat(Collection<FencingToken> tokens, Duration leaseFor) {
        return tx("heartbeat", () -> {
            Instant until = clock.instant().plus(leaseFor);
            Set<FencingToken> lost = new LinkedHashSet<>();
            for (FencingToken t : tokens) {
                Row r = holder(t);
                if (r == null) lost.add(t);
                else r.lockedUntil = until;
            }
            return lost;
        });
    }

    @Override
    public int release(Collection<FencingToken> tokens) {
        return tx("release", () -> {
            int released = 0;
            for (FencingToken t : Set.copyOf(tokens)) {
                Row r = holder(t);
                if (r == null) continue;
                r.attempts--;
                r.lockedBy = null;
                r.lockedUntil = null;
                if (r.attempts == 0) r.startedAt = null;
                if (r.cancelRequested) {
                    r.state = JobState.CANCELLED;
                    r.finishedAt = clock.instant();
                    release(r.queue, r.tenant); // its slot under the tenant's cap is free
                } else {
                    r.state = JobState.QUEUED;
                }
                released++;
            }
            return released;
        });
    }

    @Override
    public List<Job> runsLeasedTo(WorkerId worker, int limit) {
        if (limit < 1 || limit > 100_000) throw new IllegalArgumentException("limit must be 1-100000, was " + limit);
        return tx("runsLeasedTo", () -> rows.values().stream()
                .filter(r -> r.state == JobState.RUNNING && r.lockedBy.equals(worker))
                .sorted(Comparator.comparing((Row r) -> r.startedAt).thenComparingLong(r -> r.id))
                .limit(limit)
                .map(Row::toJob)
                .toList());
    }

    @Override
    public int reapExpiredLeases(int limit, ExpiredLeaseDecider decider) {
        checkLimit(limit);
        Objects.requireNonNull(decider, "decider");
        return tx("reapExpiredLeases", () -> {
            Instant now = clock.instant();
            List<Row> expired = rows.values().stream()
                    .filter(r -> r.state == JobState.RUNNING && r.lockedUntil.isBefore(now))
                    .sorted(Comparator.comparing((Row r) -> r.lockedUntil).thenComparingLong(r -> r.id))
                    .limit(limit)
                    .toList();
            // Decided for every row before any is written: a decider that throws leaves the batch running.
            List<RetryDecision> decisions = expired.stream()
                    .map(r -> Objects.requireNonNull(decider.decide(r.attempts, r.maxAttempts), "the decider's decision"))
                    .toList();
            for (int i = 0; i < expired.size(); i++) {
                Row r = expired.get(i);
                String error = "lease expired: worker " + r.lockedBy + " did not finish attempt " + r.attempts + " of "
                        + r.maxAttempts + " before its lease ran out at " + r.lockedUntil;
                write(r, error, decisions.get(i));
            }
            return expired.size();
        });
    }

    @Override
    public int promoteDue(int limit) {
        checkLimit(limit);
        return tx("promoteDue", () -> {
            Instant now = clock.instant();
            // up to limit per queue, oldest first, as the real store promotes queue by queue
            Map<QueueName, Integer> taken = new HashMap<>();
            List<Row> due = rows.values().stream()
                    .filter(r -> r.state == JobState.SCHEDULED && !r.runAt.isAfter(now))
                    .sorted(Comparator.comparing((Row r) -> r.runAt).thenComparingLong(r -> r.id))
                    .filter(r -> taken.merge(r.queue, 1, Integer::sum) <= limit)
                    .toList();
            // One statement in the real store: every queue's V is read before any job of the pass is queued,
            // so a job promoted first does not push the others' tags up.
            Map<QueueName, Double> v = new HashMap<>();
            for (Row r : due) v.computeIfAbsent(r.queue, this::virtualTime);
            for (Row r : due) makeRunnable(r, v.get(r.queue));
            // as the real store: each tenant's promoted jobs with priority are sorted in among its queued ones
            Map<TenantKey, Integer> top = new HashMap<>();
            for (Row r : due) if (r.state == JobState.QUEUED) top.merge(new TenantKey(r.queue, r.tenant), r.priority, Math::max);
            top.forEach((k, p) -> reorderForPriority(k.queue(), k.tenant(), p));
            return due.size();
        });
    }

    @Override
    public RetryResult retryDead(JobId id) {
        return tx("retryDead", () -> {
            Row r = rows.get(id.value());
            if (r == null) return new RetryResult.NotFound(id);
            if (r.state != JobState.DEAD) return new RetryResult.NotDead(r.toJob());
            r.maxAttempts = r.attempts + r.maxAttempts;
            r.finishedAt = null;
            r.runAt = clock.instant();
            makeRunnable(r);
            if (r.state == JobState.QUEUED) reorderForPriority(r.queue, r.tenant, r.priority);
            return new RetryResult.Requeued(r.toJob());
        });
    }

    @Override
    public CancelResult cancel(JobId id) {
        Objects.requireNonNull(id, "id");
        return tx("cancel", () -> {
            Row r = rows.get(id.value());
            if (r == null) return new CancelResult.NotFound(id);
            switch (r.state) {
                case SCHEDULED, QUEUED, HELD -> {
                    boolean wasQueued = r.state == JobState.QUEUED;
                    r.state = JobState.CANCELLED;
                    r.finishedAt = clock.instant();
                    if (wasQueued) release(r.queue, r.tenant); // a queued job counted toward its tenant's cap
                    return new CancelResult.Cancelled(r.toJob());
                }
                case RUNNING -> {
                    r.cancelRequested = true;
                    return new CancelResult.Requested(r.toJob());
                }
                case CANCELLED -> {
                    return new CancelResult.Cancelled(r.toJob());
                }
                default -> {
                    return new CancelResult.Finished(r.toJob());
                }
            }
        });
    }

    @Override
    public Set<FencingToken> cancelRequested(Collection<FencingToken> tokens) {
        Objects.requireNonNull(tokens, "tokens");
        return tx("cancelRequested", () -> tokens.stream()
                .filter(t -> {
                    Row r = holder(t);
                    return r != null && r.cancelRequested;
                })
                .collect(java.util.stream.Collectors.toUnmodifiableSet()));
    }

    @Override
    public QueueSettings configureQueue(QueueUpdate update) {
        Objects.requireNonNull(update, "update");
        QueueName queue = update.queue();
        return tx("configureQueue", () -> {
            QueueSettings now = update.applyTo(settings(queue));
            queueSettings.put(queue, now);
            // Back to jobs: a tenant's jobs held by the window only are released (the sweep does it in SQL).
            tenants.keySet().stream().filter(k -> k.queue().equals(queue)).toList().forEach(k -> release(k.queue(), k.tenant()));
            return now;
        });
    }

    private final InMemorySchedules schedules = new InMemorySchedules();
    /** API keys by id, as schema V11 keeps them; revoked ones stay (null value) so an id is never reused. */
    private final Map<String, ApiKey> apiKeys = new java.util.LinkedHashMap<>();

    @Override
    public ApiKey saveApiKey(ApiKey key) {
        return tx("saveApiKey", () -> {
            if (apiKeys.containsKey(key.id())) throw new IllegalArgumentException("key id " + key.id() + " is taken");
            ApiKey stored = new ApiKey(key.id(), key.tenant(), key.digest(), clock.instant());
            apiKeys.put(key.id(), stored);
            return stored;
        });
    }

    @Override
    public Optional<ApiKey> apiKey(String id) {
        return tx("apiKey", () -> Optional.ofNullable(apiKeys.get(id)));
    }

    @Override
    public List<ApiKey> apiKeys(TenantId tenant) {
        return tx("apiKeys", () -> apiKeys.values().stream().filter(k -> k != null && k.tenant().equals(tenant)).toList());
    }

    @Override
    public boolean revokeApiKey(TenantId tenant, String id) {
        return tx("revokeApiKey", () -> {
            ApiKey k = apiKeys.get(id);
            if (k == null || !k.tenant().equals(tenant)) return false;
            apiKeys.put(id, null);
            return true;
        });
    }

    @Override
    public ScheduleWrite putSchedule(ScheduleDefinition definition) {
        Objects.requireNonNull(definition, "definition");
        return tx("putSchedule", () -> {
            requireStorablePayload(definition.job().payload());
            return schedules.put(definition, clock.instant());
        });
    }

    @Override
    public Optional<Schedule> schedule(ScheduleName name) {
        return tx("schedule", () -> schedules.get(name));
    }

    @Override
    public SchedulePage schedules(String after, int limit) {
        Objects.requireNonNull(after, "after");
        if (limit < 1) throw new IllegalArgumentException("limit must be >= 1, was " + limit);
        return tx("schedules", () -> schedules.page(after, limit));
    }

    @Override
    public ScheduleTimings scheduleTimings(String after, int limit) {
        Objects.requireNonNull(after, "after");
        if (limit < 1) throw new IllegalArgumentException("limit must be >= 1, was " + limit);
        return tx("scheduleTimings", () -> schedules.timings(after, limit));
    }

    @Override
    public boolean deleteSchedule(ScheduleName name) {
        return tx("deleteSchedule", () -> schedules.delete(name));
    }

    @Override
    public Optional<JobId> fireSchedule(ScheduleName name, long revision, Instant tick) {
        return tx("fireSchedule", () -> schedules.fire(name, revision, tick, job -> JobId.of(insert(job.tenant(), job.queue(),
                job.task(), job.payload(), job.maxAttempts(), Duration.ZERO, Optional.empty()).id)));
    }

    @Override
    public Instant now() {
        return tx("now", clock::instant);
    }

    private record WorkerRow(List<QueueName> queues, List<TaskName> tasks, Duration beat, Instant startedAt, Instant lastSeen) {}

    private final Map<WorkerId, WorkerRow> workers = new java.util.TreeMap<>(Comparator.comparing(WorkerId::value));

    /**
     * Every ask gets the turn: this store serves one process, where turns would save nothing (the gap is
     * the database store's concern, tested there). Counted, and failable, like any other call.
     */
    @Override
    public boolean takeUpkeepTurn(WorkerId worker, Duration gap) {
        return tx("takeUpkeepTurn", () -> true);
    }

    @Override
    public void workerAlive(WorkerId id, Collection<QueueName> queues, Collection<TaskName> tasks, Duration beat) {
        Objects.requireNonNull(id, "id");
        tx("workerAlive", () -> {
            Instant now = clock.instant();
            workers.values().removeIf(w -> w.lastSeen().isBefore(now.minus(Duration.ofDays(1))));
            WorkerRow before = workers.get(id);
            workers.put(id, new WorkerRow(queues.stream().sorted(Comparator.comparing(QueueName::value)).toList(),
                    tasks.stream().sorted(Comparator.comparing(TaskName::value)).toList(), beat,
                    before == null ? now : before.startedAt(), now));
            return null;
        });
    }

    @Override
    public void workerGone(WorkerId id) {
        tx("workerGone", () -> workers.remove(id));
    }

    @Override
    public List<WorkerInfo> liveWorkers() {
        return tx("liveWorkers", () -> {
            Instant now = clock.instant();
            return workers.entrySet().stream()
                    .filter(e -> e.getValue().lastSeen().isAfter(now.minus(e.getValue().beat().multipliedBy(3))))
                    .map(e -> new WorkerInfo(e.getKey(), e.getValue().queues(), e.getValue().tasks(), e.getValue().startedAt(),
                            e.getValue().lastSeen(), rows.values().stream()
                                    .filter(r -> r.state == JobState.RUNNING && e.getKey().equals(r.lockedBy)).count()))
                    .toList();
        });
    }

    /** Finished rows past their queue's retention, at most {@code limit} per queue and state, oldest first. */
    @Override
    public int deleteFinished(int limit) {
        checkLimit(limit);
        return tx("deleteFinished", () -> {
            Instant now = clock.instant();
            Map<List<Object>, Integer> taken = new HashMap<>();
            List<Row> doomed = rows.values().stream()
                    .filter(r -> r.finishedAt != null && (r.state == JobState.DONE || r.state == JobState.DEAD || r.state == JobState.CANCELLED))
                    .filter(r -> {
                        Duration keep = keep(settings(r.queue).retention(), r.state);
                        return !keep.isZero() && r.finishedAt.isBefore(now.minus(keep));
                    })
                    .sorted(Comparator.comparing((Row r) -> r.finishedAt).thenComparingLong(r -> r.id))
                    .filter(r -> taken.merge(List.of(r.queue, r.state), 1, Integer::sum) <= limit)
                    .toList();
            for (Row r : doomed) {
                rows.remove(r.id);
                r.idempotencyKey.ifPresent(k -> idempotency.remove(new IdempotencyKey(r.tenant, k)));
            }
            return doomed.size();
        });
    }

    private static Duration keep(Retention r, JobState state) {
        return switch (state) {
            case DONE -> r.done();
            case DEAD -> r.dead();
            default -> r.cancelled();
        };
    }

    @Override
    public TenantSettings configureTenant(TenantUpdate update) {
        Objects.requireNonNull(update, "update");
        return tx("configureTenant", () -> {
            TenantRow t = tenantRow(update.queue(), update.tenant());
            update.weight().ifPresent(w -> t.weight = w);
            switch (update.cap()) {
                case TenantUpdate.CapChange.Keep keep -> { }
                case TenantUpdate.CapChange.Remove remove -> t.maxRunning = null;
                case TenantUpdate.CapChange.SetTo set -> {
                    t.maxRunning = set.max().value();
                    // Hold the queued jobs beyond the cap, newest tags first; running ones run on.
                    long excess = active(update.queue(), update.tenant()) - t.maxRunning;
                    List<Row> newest = rows.values().stream()
                            .filter(r -> r.state == JobState.QUEUED && r.queue.equals(update.queue()) && r.tenant.equals(update.tenant()))
                            .sorted(Comparator.comparingDouble((Row r) -> r.vtime).thenComparingLong(r -> r.id).reversed())
                            .limit(Math.max(0, excess))
                            .toList();
                    for (Row r : newest) {
                        r.state = JobState.HELD;
                        r.vtime = Double.NaN;
                    }
                }
            }
            if (!(update.cap() instanceof TenantUpdate.CapChange.Keep)) release(update.queue(), update.tenant());
            return new TenantSettings(update.tenant(), update.queue(), t.weight, Optional.ofNullable(t.maxRunning).map(MaxRunning::new));
        });
    }

    @Override
    public List<CapUsage> capUsage(int limit) {
        if (limit < 1) throw new IllegalArgumentException("limit must be >= 1, was " + limit);
        return tx("capUsage", () -> tenants.entrySet().stream()
                .filter(e -> e.getValue().maxRunning != null)
                .sorted(Comparator.comparing((Map.Entry<TenantKey, TenantRow> e) -> e.getKey().queue().value())
                        .thenComparing(e -> e.getKey().tenant().value()))
                .limit(limit)
                .map(e -> new CapUsage(e.getKey().queue(), e.getKey().tenant(), new MaxRunning(e.getValue().maxRunning),
                        count(e.getKey(), JobState.RUNNING), count(e.getKey(), JobState.HELD)))
                .toList());
    }

    private long count(TenantKey key, JobState state) {
        return rows.values().stream()
                .filter(r -> r.state == state && r.queue.equals(key.queue()) && r.tenant.equals(key.tenant()))
                .count();
    }

    @Override
    public Optional<Job> get(JobId id) {
        return tx("get", () -> Optional.ofNullable(rows.get(id.value())).map(Row::toJob));
    }

    @Override
    public List<Job> list(JobQuery query) {
        return tx("list", () -> upToPageChars(page(query)));
    }

    /** Up to {@code query.limit()} jobs it matches, newest first. */
    private List<Job> page(JobQuery query) {
        return rows.descendingMap().values().stream()
                .filter(r -> query.tenant().map(t -> t.equals(r.tenant)).orElse(true))
                .filter(r -> query.queue().map(q -> q.equals(r.queue)).orElse(true))
                .filter(r -> query.state().map(s -> s == r.state).orElse(true))
                .filter(r -> query.task().map(t -> t.equals(r.task)).orElse(true))
                .filter(r -> query.after().map(a -> r.id < a.value()).orElse(true))
                .limit(query.limit())
                .map(Row::toJob)
                .toList();
    }

    /** {@code jobs} up to the one that would take them past {@link JobStore#LIST_PAGE_CHARS} (the first always). */
    private static List<Job> upToPageChars(List<Job> jobs) {
        List<Job> page = new ArrayList<>();
        long chars = 0;
        for (Job job : jobs) {
            chars += JobStore.listPageChars(job);
            if (!page.isEmpty() && chars > LIST_PAGE_CHARS) break;
            page.add(job);
        }
        return page;
    }

    @Override
    public List<JobSummary> summaries(JobQuery query) {
        return tx("summaries", () -> page(query)).stream().map(j -> new JobSummary(j.id(), j.tenant(), j.queue(), j.task(), j.state(), j.attempts(),
                j.maxAttempts(), j.createdAt(), j.finishedAt(), j.lastError().map(e -> e.length() <= JobSummary.ERROR_START ? e
                        : e.substring(0, JobSummary.ERROR_START)))).toList();
    }

    @Override
    public Map<QueueName, Map<JobState, Long>> countsByQueueAndState() {
        return tx("countsByQueueAndState", () -> {
            Map<QueueName, Map<JobState, Long>> counts = new LinkedHashMap<>();
            for (Row r : rows.values()) {
                counts.computeIfAbsent(r.queue, q -> new java.util.EnumMap<>(JobState.class)).merge(r.state, 1L, Long::sum);
            }
            return counts;
        });
    }

    @Override
    public Map<QueueName, Duration> oldestRunnableAge() {
        return tx("oldestRunnableAge", () -> {
            Instant now = clock.instant();
            Map<QueueName, Duration> ages = new LinkedHashMap<>();
            for (Row r : rows.values()) {
                if (r.state != JobState.QUEUED) continue;
                Duration age = Duration.between(r.runAt, now);
                if (age.isNegative()) age = Duration.ZERO;
                ages.merge(r.queue, age, (a, b) -> a.compareTo(b) >= 0 ? a : b);
            }
            return ages;
        });
    }

    @Override
    public List<Backlog> largestBacklogs(int limit) {
        if (limit < 1) throw new IllegalArgumentException("limit must be >= 1, was " + limit);
        return tx("largestBacklogs", () -> {
            Map<TenantKey, Long> counts = new HashMap<>();
            for (Row r : rows.values()) {
                if (r.state == JobState.QUEUED) counts.merge(new TenantKey(r.queue, r.tenant), 1L, Long::sum);
            }
            return counts.entrySet().stream()
                    .map(e -> new Backlog(e.getKey().queue(), e.getKey().tenant(), e.getValue()))
                    .sorted(Comparator.comparingLong(Backlog::queued).reversed()
                            .thenComparing(b -> b.queue().value()).thenComparing(b -> b.tenant().value()))
                    .limit(limit)
                    .toList();
        });
    }

    @Override
    public List<TenantActivity> tenantActivity(Optional<TenantId> tenant, int limit) {
        if (limit < 1) throw new IllegalArgumentException("limit must be >= 1, was " + limit);
        return tx("tenantActivity", () -> {
            Map<TenantKey, long[]> live = new HashMap<>();
            for (Row r : rows.values()) {
                int slot = switch (r.state) { case QUEUED -> 0; case HELD -> 1; case RUNNING -> 2; default -> -1; };
                if (slot >= 0) live.computeIfAbsent(new TenantKey(r.queue, r.tenant), k -> new long[3])[slot]++;
            }
            return tenants.entrySet().stream()
                    .filter(e -> tenant.map(t -> t.equals(e.getKey().tenant())).orElse(true))
                    .map(e -> {
                        long[] n = live.getOrDefault(e.getKey(), new long[3]);
                        return new TenantActivity(e.getKey().queue(), e.getKey().tenant(), e.getValue().weight,
                                Optional.ofNullable(e.getValue().maxRunning).map(MaxRunning::new), n[0], n[1], n[2]);
                    })
                    .sorted(Comparator.comparingLong((TenantActivity a) -> a.backlog() + a.running()).reversed()
                            .thenComparing(a -> a.queue().value()).thenComparing(a -> a.tenant().value()))
                    .limit(limit)
                    .toList();
        });
    }

    @Override
    public List<FinishedCount> finishedPerMinute(Optional<TenantId> tenant, int minutes) {
        if (minutes < 1 || minutes > 1_440) throw new IllegalArgumentException("minutes must be 1-1440, was " + minutes);
        return tx("finishedPerMinute", () -> {
            Instant from = clock.instant().truncatedTo(java.time.temporal.ChronoUnit.MINUTES).minus(Duration.ofMinutes(minutes));
            Map<FinishedCount, Long> counts = new HashMap<>();
            for (Row r : rows.values()) {
                if (r.finishedAt == null || r.finishedAt.isBefore(from) || !r.state.isFinal()) continue;
                if (tenant.isPresent() && !tenant.get().equals(r.tenant)) continue;
                counts.merge(new FinishedCount(r.finishedAt.truncatedTo(java.time.temporal.ChronoUnit.MINUTES), r.queue, r.state, 0), 1L, Long::sum);
            }
            return counts.entrySet().stream()
                    .map(e -> new FinishedCount(e.getKey().minute(), e.getKey().queue(), e.getKey().state(), e.getValue()))
                    .sorted(Comparator.comparing(FinishedCount::minute).thenComparing(c -> c.queue().value()).thenComparing(c -> c.state().dbName()))
                    .toList();
        });
    }

    @Override
    public void ping() {
        tx("ping", () -> null);
    }

    // --- internals ----------------------------------------------------------------------------

    private <T> T tx(String method, Supplier<T> body) {
        callers.computeIfAbsent(method, m -> java.util.concurrent.ConcurrentHashMap.newKeySet()).add(Thread.currentThread().getName());
        CountDownLatch gate = gates.get(method);
        if (gate != null) {
            atGate.computeIfAbsent(method, m -> new AtomicInteger()).incrementAndGet();
            try {
                awaitGate(gate);
            } finally {
                atGate.get(method).decrementAndGet();
            }
        }
        // Counted under the lock, so a test that sees a call counted knows its body has run or is running
        // to completion before any other call: e.g. an enqueue after "one claim counted" cannot slip into it.
        lock.lock();
        try {
            calls.computeIfAbsent(method, m -> new AtomicInteger()).incrementAndGet();
            if (!available.get() || downMethods.contains(method)) {
                throw new StoreUnavailableException(method, new IOException("simulated outage: the store is down"));
            }
            Throwable planned = plannedFailures.remove(method);
            if (planned instanceof Error e) throw e;
            if (planned instanceof RuntimeException e) throw e;
            T answer = body.get();
            if (lostAnswers.remove(method)) {
                throw new StoreUnavailableException(method, new IOException("simulated: the connection failed after the commit"));
            }
            return answer;
        } finally {
            lock.unlock();
        }
    }

    private Row insert(TenantId tenant, QueueName queue, TaskName task, String payload, int maxAttempts, Duration delay,
            Optional<String> key) {
        return insert(tenant, queue, task, payload, maxAttempts, delay, key, 0);
    }

    private Row insert(TenantId tenant, QueueName queue, TaskName task, String payload, int maxAttempts, Duration delay,
            Optional<String> key, int priority) {
        Instant now = clock.instant();
        Row r = new Row(nextId++, tenant, queue, task, payload, maxAttempts, now, key);
        r.priority = priority;
        rows.put(r.id, r);
        tenantRow(queue, tenant); // the tenant row exists from its first job, as the SQL upsert makes it
        if (delay.isZero()) {
            r.runAt = now;
            makeRunnable(r);
        } else {
            r.state = JobState.SCHEDULED;
            r.runAt = now.plus(delay);
        }
        return r;
    }

    /**
     * As TenantPriority.REORDER: the tenant's queued jobs from its first one of lower priority than
     * {@code priority} onwards (at most {@link #PRIORITY_REORDER_LIMIT} of them, and the urgent ones beyond)
     * take their pooled tags again by (priority, highest first; then tag order).
     */
    private void reorderForPriority(QueueName queue, TenantId tenant, int priority) {
        if (priority == 0) return;
        List<Row> queued = rows.values().stream()
                .filter(r -> r.state == JobState.QUEUED && r.queue.equals(queue) && r.tenant.equals(tenant))
                .sorted(Comparator.comparingDouble((Row r) -> r.vtime).thenComparingLong(r -> r.id))
                .toList();
        int first = 0;
        while (first < queued.size() && queued.get(first).priority >= priority) first++;
        int limitEnd = Math.min(queued.size(), first + PRIORITY_REORDER_LIMIT);
        List<Row> suffix = new ArrayList<>(queued.subList(first, limitEnd));
        // beyond the limit only the urgent ones (the new jobs among them) join, from the back
        queued.subList(limitEnd, queued.size()).stream().filter(r -> r.priority >= priority).forEach(suffix::add);
        List<Double> tags = suffix.stream().map(r -> r.vtime).toList(); // already in order
        List<Row> holders = suffix.stream().sorted(Comparator.comparingInt((Row r) -> -r.priority)
                .thenComparingDouble(r -> r.vtime).thenComparingLong(r -> r.id)).toList();
        for (int i = 0; i < holders.size(); i++) holders.get(i).vtime = tags.get(i);
    }

    /** Queued with a fresh start tag: max(V, tenant's last tag) + 1/weight. */
    private void makeRunnable(Row r) {
        makeRunnable(r, virtualTime(r.queue));
    }

    private void makeRunnable(Row r, double queueVirtualTime) {
        TenantRow tenant = tenantRow(r.queue, r.tenant);
        if (tenant.maxRunning != null || fairness(r.queue) == Fairness.WORK) {
            // A capped tenant's runnable job, or any in a work queue, waits untagged; release() queues what
            // the cap and the work window allow.
            r.state = JobState.HELD;
            r.vtime = Double.NaN;
            release(r.queue, r.tenant);
            return;
        }
        queue(r, tenant, queueVirtualTime);
    }

    private static void queue(Row r, TenantRow tenant, double queueVirtualTime) {
        double tag = Math.max(queueVirtualTime, tenant.lastVtime) + tenant.weight.step();
        tenant.lastVtime = tag;
        r.vtime = tag;
        r.cost = Double.NaN;
        r.state = JobState.QUEUED;
    }

    /**
     * Queues the tenant's oldest held jobs, as many as its cap and, in a work queue, the window of
     * {@link #WORK_WINDOW} queued jobs allow (all of them with neither; one before the tenant's first
     * measured run). A work queue charges each the tenant's estimate, and starts above the tenant's queued
     * tags, so its own jobs keep their order.
     */
    private void release(QueueName queue, TenantId tenant) {
        TenantRow t = tenantRow(queue, tenant);
        boolean work = fairness(queue) == Fairness.WORK;
        long room = t.maxRunning == null ? Long.MAX_VALUE : t.maxRunning - active(queue, tenant);
        // A tenant with no measured run yet gets one job tagged: its first estimate is a guess.
        if (work) room = Math.min(room, (t.runMs == null ? 1 : WORK_WINDOW) - count(new TenantKey(queue, tenant), JobState.QUEUED));
        List<Row> held = rows.values().stream()
                .filter(r -> r.state == JobState.HELD && r.queue.equals(queue) && r.tenant.equals(tenant))
                .sorted(Comparator.comparingInt((Row r) -> -r.priority).thenComparingLong(r -> r.id))
                .limit(Math.max(0, room))
                .toList();
        double v = virtualTime(queue);
        if (!work) {
            for (Row r : held) queue(r, t, v);
            return;
        }
        double estimate = Math.max(MIN_CHARGED_MS, t.runMs != null ? t.runMs : queueAverageMs(queue));
        double base = rows.values().stream()
                .filter(r -> r.state == JobState.QUEUED && r.queue.equals(queue) && r.tenant.equals(tenant))
                .mapToDouble(r -> r.vtime).max().orElse(0);
        // Tags start above the tenant's queued ones (its order); L keeps a refund those could not take.
        double from = Math.max(v, t.lastVtime);
        double tag = Math.max(base, from);
        for (Row r : held) {
            tag += estimate / t.weight.value();
            r.vtime = tag;
            r.cost = estimate;
            r.state = JobState.QUEUED;
        }
        if (!held.isEmpty()) t.lastVtime = from + held.size() * estimate / t.weight.value();
    }

    /**
     * A run of a job charged an estimate ended after {@code ran}: its tenant's last tag moves by the
     * difference over its weight (never below 0), and its moving average of run times takes the measure
     * (weight 0.2). Measured in milliseconds, at least {@link #MIN_CHARGED_MS}. Unknown run time: the
     * estimate stands.
     */
    private void chargeMeasured(Row r, Optional<Duration> ran) {
        if (Double.isNaN(r.cost) || ran.isEmpty()) return;
        TenantRow t = tenantRow(r.queue, r.tenant);
        double measured = measuredMs(ran.get());
        // A queue set back to jobs counts tags in jobs: the milliseconds of a run tagged before do not move them.
        if (fairness(r.queue) == Fairness.WORK) t.lastVtime = Math.max(0, t.lastVtime + (measured - r.cost) / t.weight.value());
        t.runMs = t.runMs == null ? measured : 0.8 * t.runMs + 0.2 * measured;
        r.cost = Double.NaN;
    }

    private static double measuredMs(Duration ran) {
        return Math.min(1e9, Math.max(MIN_CHARGED_MS, ran.toNanos() / 1e6));
    }

    /** The average of the queue's tenants' run-time averages; 1 ms before any run was measured there. */
    private double queueAverageMs(QueueName queue) {
        return tenants.entrySet().stream()
                .filter(e -> e.getKey().queue().equals(queue) && e.getValue().runMs != null)
                .mapToDouble(e -> e.getValue().runMs).average().orElse(MIN_CHARGED_MS);
    }

    private Fairness fairness(QueueName queue) {
        return settings(queue).fairness();
    }

    private QueueSettings settings(QueueName queue) {
        return queueSettings.getOrDefault(queue, QueueSettings.defaults(queue));
    }

    /** The tenant's jobs queued or running in the queue: what its cap bounds. */
    private long active(QueueName queue, TenantId tenant) {
        return rows.values().stream()
                .filter(r -> (r.state == JobState.QUEUED || r.state == JobState.RUNNING) && r.queue.equals(queue) && r.tenant.equals(tenant))
                .count();
    }

    /** V: the lowest queued tag in the queue, else the highest tag handed out in it (0 when none ever was). */
    private double virtualTime(QueueName queue) {
        OptionalDouble lowestQueued = rows.values().stream()
                .filter(r -> r.state == JobState.QUEUED && r.queue.equals(queue))
                .mapToDouble(r -> r.vtime)
                .min();
        if (lowestQueued.isPresent()) return lowestQueued.getAsDouble();
        return tenants.entrySet().stream()
                .filter(e -> e.getKey().queue().equals(queue))
                .mapToDouble(e -> e.getValue().lastVtime)
                .max()
                .orElse(0);
    }

    private TenantRow tenantRow(QueueName queue, TenantId tenant) {
        return tenants.computeIfAbsent(new TenantKey(queue, tenant), k -> new TenantRow());
    }

    /** Writes a failed run as decided: scheduled at now + delay, or dead now. */
    private void write(Row r, String error, RetryDecision decision) {
        Instant now = clock.instant();
        r.lastError = Optional.of(StoredText.sanitize(error, MAX_ERROR_BYTES));
        if (r.cancelRequested) {
            // cancelling was asked while it ran: a run that did not succeed ends the job, never retried
            r.state = JobState.CANCELLED;
            r.finishedAt = now;
        } else switch (decision) {
            case RetryDecision.RetryAfter after -> {
                r.state = JobState.SCHEDULED;
                r.runAt = now.plus(after.delay());
            }
            case RetryDecision.Dead dead -> {
                r.state = JobState.DEAD;
                r.finishedAt = now;
            }
        }
        r.clearLease();
        release(r.queue, r.tenant); // the run ended: its tenant may have room under its cap
    }

    /** The row if it is running under exactly this token, else null. */
    private Row holder(FencingToken t) {
        Row r = rows.get(t.job().value());
        if (r == null || r.state != JobState.RUNNING || !t.worker().equals(r.lockedBy) || r.attempts != t.attempt()) {
            return null;
        }
        return r;
    }

    private FencedWrite rejected(FencingToken token) {
        return new FencedWrite.Rejected(token, Optional.ofNullable(rows.get(token.job().value())).map(Row::toJob));
    }

    private static void checkLimit(int limit) {
        if (limit < 1) throw new IllegalArgumentException("limit must be >= 1, was " + limit);
    }

    /** PostgreSQL's numeric: at most this many digits before the decimal point ... */
    private static final int NUMERIC_MAX_INTEGER_DIGITS = 131_072;
    /** ... and this many after it. jsonb stores every JSON number as a numeric. */
    private static final int NUMERIC_MAX_SCALE = 16_383;

    private static final ObjectMapper EXACT_JSON = new ObjectMapper()
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .enable(DeserializationFeature.USE_BIG_INTEGER_FOR_INTS);

    /**
     * Refuses a payload jsonb would refuse, as the real store does (IllegalArgumentException): not JSON, a
     * {@code \u0000} or lone-surrogate escape, a number beyond numeric's range.
     */
    static void requireStorablePayload(String payload) {
        try {
            if (needsCleaning(parseForJsonb(payload))) throw new IllegalArgumentException("\\u0000 or a lone surrogate escape");
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("payload is not storable JSON: " + e.getMessage(), e);
        }
    }

    /**
     * The result as the real store keeps it: NUL and lone surrogates (already replaced in the raw text by
     * the caller) also replaced where they were escapes, in strings and keys alike.
     *
     * @throws IllegalArgumentException with jsonb's reason if it would refuse the text
     */
    static String storableResult(String json) {
        JsonNode tree = parseForJsonb(json);
        return needsCleaning(tree) ? cleanStrings(tree).toString() : json;
    }

    /** jsonb's parse: JSON, numbers within numeric's range. */
    private static JsonNode parseForJsonb(String json) {
        JsonNode tree;
        try {
            tree = EXACT_JSON.readTree(json);
        } catch (JacksonException e) {
            throw new IllegalArgumentException("invalid input syntax for type json: " + e.getOriginalMessage(), e);
        }
        if (tree == null || tree.isMissingNode()) throw new IllegalArgumentException("invalid input syntax for type json: empty");
        requireNumericRange(tree);
        return tree;
    }

    private static void requireNumericRange(JsonNode node) {
        if (node.isNumber()) {
            BigDecimal n = node.decimalValue();
            if (n.precision() - n.scale() > NUMERIC_MAX_INTEGER_DIGITS || n.scale() > NUMERIC_MAX_SCALE) {
                throw new IllegalArgumentException("value overflows numeric format");
            }
        }
        node.forEach(InMemoryJobStore::requireNumericRange);
    }

    /** Whether a string or key holds NUL or a lone surrogate (decoded from an escape: the raw ones are gone). */
    private static boolean needsCleaning(JsonNode node) {
        if (node.isTextual()) return !StoredText.clean(node.textValue()).equals(node.textValue());
        for (Map.Entry<String, JsonNode> e : node.properties()) {
            if (!StoredText.clean(e.getKey()).equals(e.getKey())) return true;
        }
        for (JsonNode child : node) {
            if (needsCleaning(child)) return true;
        }
        return false;
    }

    private static JsonNode cleanStrings(JsonNode node) {
        if (node.isTextual()) return TextNode.valueOf(StoredText.clean(node.textValue()));
        if (node.isArray()) {
            ArrayNode out = JsonNodeFactory.instance.arrayNode();
            node.forEach(e -> out.add(cleanStrings(e)));
            return out;
        }
        if (node.isObject()) {
            ObjectNode out = JsonNodeFactory.instance.objectNode();
            for (Map.Entry<String, JsonNode> e : node.properties()) out.set(StoredText.clean(e.getKey()), cleanStrings(e.getValue()));
            return out;
        }
        return node;
    }

    private record TenantKey(QueueName queue, TenantId tenant) {}

    private record IdempotencyKey(TenantId tenant, String key) {}

    private static final class TenantRow {
        TenantWeight weight = TenantWeight.DEFAULT;
        double lastVtime;
        /** The cap, or null for none. */
        Integer maxRunning;
        /** Moving average of measured run times in a work queue, in ms; null before the first. */
        Double runMs;
    }

    private static final class Row {
        final long id;
        final TenantId tenant;
        final QueueName queue;
        final TaskName task;
        final String payload;
        final Instant createdAt;
        final Optional<String> idempotencyKey;
        int maxAttempts;
        JobState state;
        double vtime = Double.NaN;
        int priority;
        /** Whether cancelling was asked while it ran. */
        boolean cancelRequested;
        /** The estimate, in ms, a work queue charged for the current tag; NaN when none is pending. */
        double cost = Double.NaN;
        Instant runAt;
        int attempts;
        WorkerId lockedBy;
        Instant lockedUntil;
        Optional<String> result = Optional.empty();
        Optional<String> lastError = Optional.empty();
        Instant startedAt;
        Instant finishedAt;

        Row(long id, TenantId tenant, QueueName queue, TaskName task, String payload, int maxAttempts, Instant now,
                Optional<String> key) {
            this.id = id;
            this.tenant = tenant;
            this.queue = queue;
            this.task = task;
            this.payload = payload;
            this.maxAttempts = maxAttempts;
            this.createdAt = now;
            this.runAt = now;
            this.idempotencyKey = key;
        }

        void clearLease() {
            lockedBy = null;
            lockedUntil = null;
        }

        Job toJob() {
            return new Job(JobId.of(id), tenant, queue, task, payload, result, state,
                    Double.isNaN(vtime) ? OptionalDouble.empty() : OptionalDouble.of(vtime), runAt, attempts,
                    maxAttempts,
                    state == JobState.RUNNING ? Optional.of(new Lease(lockedBy, lockedUntil)) : Optional.empty(),
                    lastError, idempotencyKey, createdAt, Optional.ofNullable(startedAt),
                    Optional.ofNullable(finishedAt), cancelRequested, priority);
        }
    }
}
