package io.jobq.postgres.testing;

import io.jobq.application.port.ApiKeyStore.ApiKey;
import io.jobq.application.port.Backlog;
import io.jobq.application.port.CancelResult;
import io.jobq.application.port.ClaimRequest;
import io.jobq.application.port.EnqueueResult;
import io.jobq.application.port.ExpiredLeaseDecider;
import io.jobq.application.port.FencedWrite;
import io.jobq.application.port.JobQuery;
import io.jobq.application.port.JobStore;
import io.jobq.application.port.NewJob;
import io.jobq.application.port.NewJobBatch;
import io.jobq.application.port.OutcomeWrite;
import io.jobq.application.port.OutcomesThenClaim;
import io.jobq.application.port.RetryResult;
import io.jobq.application.port.QueueSettings;
import io.jobq.application.port.QueueUpdate;
import io.jobq.application.port.TenantSettings;
import io.jobq.application.port.TenantUpdate;
import io.jobq.application.port.CapUsage;
import io.jobq.application.port.VacuumHealth;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.JobState;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.lease.FencingToken;
import io.jobq.domain.lease.WorkerId;
import io.jobq.domain.retry.RetryDecision;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * A {@link JobStore} that hands every call to a real one. Tests subclass it to observe or switch off
 * one method (e.g. heartbeats) while everything else stays the real store; it is a decorator, not a mock.
 */
public class ForwardingJobStore implements JobStore {
    private final JobStore delegate;

    public ForwardingJobStore(JobStore delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    /** The store every call goes to; a subclass may decide per call (e.g. fail them all while "down"). */
    protected JobStore delegate() {
        return delegate;
    }

    @Override
    public EnqueueResult enqueue(NewJob job) {
        return delegate().enqueue(job);
    }

    @Override
    public List<JobId> enqueueBatch(NewJobBatch batch) {
        return delegate().enqueueBatch(batch);
    }

    @Override
    public List<Job> claim(ClaimRequest req) {
        return delegate().claim(req);
    }

    @Override
    public List<FencedWrite> recordOutcomes(List<OutcomeWrite> writes) {
        return delegate().recordOutcomes(writes);
    }

    @Override
    public boolean claimsCarryOutcomes() {
        return delegate().claimsCarryOutcomes();
    }

    @Override
    public OutcomesThenClaim recordOutcomesThenClaim(List<OutcomeWrite> writes, ClaimRequest req) {
        return delegate().recordOutcomesThenClaim(writes, req);
    }

    @Override
    public FencedWrite complete(FencingToken token, Optional<String> resultJson) {
        return delegate().complete(token, resultJson);
    }

    @Override
    public FencedWrite fail(FencingToken token, String error, RetryDecision decision) {
        return delegate().fail(token, error, decision);
    }

    @Override
    public Set<FencingToken> heartbeat(Collection<FencingToken> tokens, Duration leaseFor) {
        return delegate().heartbeat(tokens, leaseFor);
    }

    @Override
    public int release(Collection<FencingToken> tokens) {
        return delegate().release(tokens);
    }

    @Override
    public List<Job> runsLeasedTo(WorkerId worker, int limit) {
        return delegate().runsLeasedTo(worker, limit);
    }

    @Override
    public int reapExpiredLeases(int limit, ExpiredLeaseDecider decider) {
        return delegate().reapExpiredLeases(limit, decider);
    }

    @Override
    public int promoteDue(int limit) {
        return delegate().promoteDue(limit);
    }

    @Override
    public RetryResult retryDead(JobId id) {
        return delegate().retryDead(id);
    }

    @Override
    public TenantSettings configureTenant(TenantUpdate update) {
        return delegate().configureTenant(update);
    }

    @Override
    public CancelResult cancel(JobId id) {
        return delegate().cancel(id);
    }

    @Override
    public Set<FencingToken> cancelRequested(Collection<FencingToken> tokens) {
        return delegate().cancelRequested(tokens);
    }

    @Override
    public QueueSettings configureQueue(QueueUpdate update) {
        return delegate().configureQueue(update);
    }

    @Override
    public boolean takeUpkeepTurn(WorkerId worker, Duration gap) {
        return delegate().takeUpkeepTurn(worker, gap);
    }

    @Override
    public void workerAlive(WorkerId id, Collection<QueueName> queues, Collection<io.jobq.domain.job.TaskName> tasks, Duration beat) {
        delegate().workerAlive(id, queues, tasks, beat);
    }

    @Override
    public void workerGone(WorkerId id) {
        delegate().workerGone(id);
    }

    @Override
    public List<io.jobq.application.port.WorkerInfo> liveWorkers() {
        return delegate().liveWorkers();
    }

    @Override
    public ScheduleWrite putSchedule(io.jobq.application.port.ScheduleDefinition definition) {
        return delegate().putSchedule(definition);
    }

    @Override
    public Optional<io.jobq.application.port.Schedule> schedule(io.jobq.domain.schedule.ScheduleName name) {
        return delegate().schedule(name);
    }

    @Override
    public SchedulePage schedules(String after, int limit) {
        return delegate().schedules(after, limit);
    }

    @Override
    public ScheduleTimings scheduleTimings(String after, int limit) {
        return delegate().scheduleTimings(after, limit);
    }

    @Override
    public boolean deleteSchedule(io.jobq.domain.schedule.ScheduleName name) {
        return delegate().deleteSchedule(name);
    }

    @Override
    public Optional<JobId> fireSchedule(io.jobq.domain.schedule.ScheduleName name, long revision, java.time.Instant tick) {
        return delegate().fireSchedule(name, revision, tick);
    }

    @Override
    public java.time.Instant now() {
        return delegate().now();
    }

    @Override
    public ApiKey saveApiKey(ApiKey key) {
        return delegate().saveApiKey(key);
    }

    @Override
    public Optional<ApiKey> apiKey(String id) {
        return delegate().apiKey(id);
    }

    @Override
    public List<ApiKey> apiKeys(io.jobq.domain.tenant.TenantId tenant) {
        return delegate().apiKeys(tenant);
    }

    @Override
    public boolean revokeApiKey(io.jobq.domain.tenant.TenantId tenant, String id) {
        return delegate().revokeApiKey(tenant, id);
    }

    @Override
    public int deleteFinished(int limit) {
        return delegate().deleteFinished(limit);
    }

    @Override
    public Optional<Job> get(JobId id) {
        return delegate().get(id);
    }

    @Override
    public List<Job> list(JobQuery query) {
        return delegate().list(query);
    }

    @Override
    public List<io.jobq.application.port.JobSummary> summaries(JobQuery query) {
        return delegate().summaries(query);
    }

    @Override
    public Map<QueueName, Map<JobState, Long>> countsByQueueAndState() {
        return delegate().countsByQueueAndState();
    }

    @Override
    public Map<QueueName, Duration> oldestRunnableAge() {
        return delegate().oldestRunnableAge();
    }

    @Override
    public List<CapUsage> capUsage(int limit) {
        return delegate().capUsage(limit);
    }

    @Override
    public List<Backlog> largestBacklogs(int limit) {
        return delegate().largestBacklogs(limit);
    }

    @Override
    public Map<QueueName, Map<JobState, Long>> liveCountsByQueue() {
        return delegate().liveCountsByQueue();
    }

    @Override
    public List<io.jobq.application.port.TenantActivity> tenantActivity(Optional<io.jobq.domain.tenant.TenantId> tenant, int limit) {
        return delegate().tenantActivity(tenant, limit);
    }

    @Override
    public List<io.jobq.application.port.FinishedCount> finishedPerMinute(Optional<io.jobq.domain.tenant.TenantId> tenant, int minutes) {
        return delegate().finishedPerMinute(tenant, minutes);
    }

    @Override
    public void ping() {
        delegate().ping();
    }

    @Override
    public Optional<VacuumHealth> vacuumHealth() {
        return delegate().vacuumHealth();
    }

    @Override
    public boolean vacuumIfNeeded() {
        return delegate().vacuumIfNeeded();
    }
}
