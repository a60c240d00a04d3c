package io.jobq.application.worker;

import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobId;
import io.jobq.domain.lease.FencingToken;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/** Records every {@link WorkerListener} event, for tests to poll. Thread-safe. */
final class RecordingListener implements WorkerListener {
    record Failure(Job claimed, String error, Job recorded) {}

    record Discard(FencingToken token, DiscardReason reason) {}

    record Beat(int extended, Set<FencingToken> lost) {}

    record StoreError(String operation, RuntimeException error) {}

    final List<List<Job>> claims = new CopyOnWriteArrayList<>();
    final List<Job> completed = new CopyOnWriteArrayList<>();
    final List<Failure> failures = new CopyOnWriteArrayList<>();
    final List<Discard> discards = new CopyOnWriteArrayList<>();
    final List<Beat> heartbeats = new CopyOnWriteArrayList<>();
    final List<StoreError> storeErrors = new CopyOnWriteArrayList<>();
    final AtomicInteger maintenanceRuns = new AtomicInteger();
    final AtomicInteger maintenanceErrors = new AtomicInteger();
    final CountDownLatch stopped = new CountDownLatch(1);
    volatile Consumer<Failure> onFailed = f -> {};
    volatile Consumer<StoreError> onStoreError = e -> {};

    @Override
    public void claimed(List<Job> jobs) {
        claims.add(jobs);
    }

    @Override
    public void completed(Job job) {
        completed.add(job);
    }

    @Override
    public void failed(Job claimed, String error, Job recorded) {
        Failure f = new Failure(claimed, error, recorded);
        failures.add(f);
        onFailed.accept(f);
    }

    @Override
    public void discarded(FencingToken token, DiscardReason reason) {
        discards.add(new Discard(token, reason));
    }

    @Override
    public void heartbeat(int extended, Set<FencingToken> lost) {
        heartbeats.add(new Beat(extended, lost));
    }

    @Override
    public void maintenance(int reaped, int promoted) {
        maintenanceRuns.incrementAndGet();
    }

    @Override
    public void maintenanceError(RuntimeException e) {
        maintenanceErrors.incrementAndGet();
    }

    @Override
    public void storeError(String operation, RuntimeException e) {
        StoreError error = new StoreError(operation, e);
        storeErrors.add(error);
        onStoreError.accept(error);
    }

    @Override
    public void stopped() {
        stopped.countDown();
    }

    int claimedJobs() {
        return claims.stream().mapToInt(List::size).sum();
    }

    boolean wasClaimed(JobId id) {
        return claims.stream().flatMap(List::stream).anyMatch(j -> j.id().equals(id));
    }

    long storeErrors(String operation) {
        return storeErrors.stream().filter(e -> e.operation().equals(operation)).count();
    }
}
