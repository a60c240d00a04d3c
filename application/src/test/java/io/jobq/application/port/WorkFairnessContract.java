package io.jobq.application.port;

import static io.jobq.application.port.JobStoreContract.LEASE;
import static io.jobq.application.port.JobStoreContract.Q;
import static io.jobq.application.port.JobStoreContract.TASK;
import static io.jobq.application.port.JobStoreContract.W1;
import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.domain.fairness.Fairness;
import io.jobq.domain.fairness.MaxRunning;
import io.jobq.domain.fairness.TenantWeight;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.JobState;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.tenant.TenantId;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Fairness by work ({@link JobStore#configureQueue} with {@link Fairness#WORK}) as every store must keep it.
 * The shares are measured on a simulated single-slot worker: it claims one job at a time and reports each
 * run as taking its tenant's duration (40 ms for {@link #SLOW}, 4 ms for {@link #FAST}), so "worker time"
 * is exact and nothing sleeps. The same scenario in a jobs queue is the wrong variant: it gives the slow
 * tenant ten times the worker time, and the test asserts that too, so the scenario demonstrably measures
 * what it claims to. {@link JobStoreContract} runs these against every store (its nested {@code WorkFairness}).
 */
public abstract class WorkFairnessContract {
    static final TenantId SLOW = TenantId.of("slow");
    static final TenantId FAST = TenantId.of("fast");
    static final Duration SLOW_RUN = Duration.ofMillis(40);
    static final Duration FAST_RUN = Duration.ofMillis(4);

    /** The store under test, empty at the start of each test. */
    protected abstract JobStore store();

    /** Makes {@code by} pass for the store (see {@link JobStoreContract#advanceTime}). */
    protected abstract void advanceTime(Duration by);

    List<JobId> enqueue(TenantId tenant, TaskName task, int n) {
        List<JobId> ids = new ArrayList<>();
        for (int left = n; left > 0; left -= 1000) {
            ids.addAll(store().enqueueBatch(new NewJobBatch(tenant, Q, task, Collections.nCopies(Math.min(1000, left), "{}"), 5, Duration.ZERO)));
        }
        return ids;
    }

    List<JobId> inState(TenantId tenant, JobState state) {
        return store().list(new JobQuery(Optional.of(tenant), Optional.of(Q), Optional.of(state), Optional.empty(), JobQuery.MAX_LIMIT,
                Optional.empty())).stream().map(Job::id).sorted(java.util.Comparator.comparingLong(JobId::value)).toList();
    }

    /**
     * Runs the simulated worker until it has spent {@code total} of worker time, and returns the worker
     * time each tenant got after the first {@code warmUp} (while the tenants' run-time averages form).
     */
    Map<TenantId, Duration> workerTime(Duration warmUp, Duration total) {
        Map<TenantId, Duration> spent = new HashMap<>();
        Duration clock = Duration.ZERO;
        int fastRuns = 0;
        while (clock.compareTo(total) < 0) {
            List<Job> claimed = store().claim(new ClaimRequest(List.of(Q), W1, 1, LEASE));
            assertThat(claimed).as("both tenants stay backlogged for the whole run").hasSize(1);
            Job job = claimed.getFirst();
            // The fast tenant's runs jitter (2 or 6 ms, 4 on average): a store that dropped the refunds of
            // its short runs and kept the charges of its long ones would give it ~20 % less than its share.
            Duration ran = job.tenant().equals(SLOW) ? SLOW_RUN : (fastRuns++ % 2 == 0 ? FAST_RUN.minusMillis(2) : FAST_RUN.plusMillis(2));
            FencedWrite w = store().recordOutcomes(List.of(new OutcomeWrite.Complete(job.fencingToken(), Optional.empty(), Optional.of(ran))))
                    .getFirst();
            assertThat(w).isInstanceOf(FencedWrite.Applied.class);
            clock = clock.plus(ran);
            if (clock.compareTo(warmUp) > 0) spent.merge(job.tenant(), ran, Duration::plus);
        }
        return spent;
    }

    static double ratio(Map<TenantId, Duration> spent) {
        return (double) spent.getOrDefault(SLOW, Duration.ZERO).toNanos() / spent.getOrDefault(FAST, Duration.ZERO).toNanos();
    }

    /**
     * Measured after 2 s of worker time: each tenant's first job runs on a guessed estimate, and until its
     * moving average of run times settles (weight 0.2 a run) its tags are off by a shrinking error, which
     * its measured runs then charge or refund: the slow tenant runs a little ahead and pays it back.
     */
    static final Duration WARM_UP = Duration.ofSeconds(2);
    static final Duration TOTAL = Duration.ofSeconds(25);

    /** Backlogs deep enough for {@link #workerTime}(WARM_UP, TOTAL) in every variant below. */
    void backlogs(TaskName slowTask, TaskName fastTask) {
        enqueue(SLOW, slowTask, 700);
        enqueue(FAST, fastTask, 4500);
    }

    @Test
    void inAWorkQueueTenantsWithTenTimesLongerJobsGetEqualWorkerTime() {
        store().configureQueue(Q, Fairness.WORK);
        backlogs(TASK, TASK);
        assertThat(ratio(workerTime(WARM_UP, TOTAL))).as("slow : fast worker time").isBetween(0.9, 1.1);
    }

    @Test
    void inAWorkQueueWeightsThreeToOneGiveThreeTimesTheWorkerTime() {
        store().configureQueue(Q, Fairness.WORK);
        store().setWeight(SLOW, Q, new TenantWeight(3));
        backlogs(TASK, TASK);
        assertThat(ratio(workerTime(WARM_UP, TOTAL))).as("slow : fast worker time").isBetween(2.7, 3.3);
    }

    @Test
    void inAJobsQueueTheSameTenantsGetWorkerTimeInProportionToTheirJobsLength() {
        backlogs(TASK, TASK);
        assertThat(ratio(workerTime(WARM_UP, TOTAL))).as("slow : fast worker time, per job")
                .isBetween(9.0, 11.0);
    }

    @Test
    void aTenantCannotBuyCheapRunsByNamingItsLongJobsLikeSomeoneElsesShortOnes() {
        store().configureQueue(Q, Fairness.WORK);
        TaskName shortName = TaskName.of("thumbnail");
        backlogs(shortName, shortName);
        assertThat(ratio(workerTime(WARM_UP, TOTAL))).isBetween(0.9, 1.1);
    }

    @Test
    void aWorkQueueTagsAWindowOfEachTenantsJobsAndHoldsTheRestInOrder() {
        store().configureQueue(Q, Fairness.WORK);
        List<JobId> ids = enqueue(SLOW, TASK, JobStore.WORK_WINDOW + 10);
        assertThat(inState(SLOW, JobState.QUEUED)).as("no run measured yet: one job on a guessed estimate")
                .containsExactly(ids.getFirst());
        Job first = store().claim(new ClaimRequest(List.of(Q), W1, 10, LEASE)).getFirst();
        store().recordOutcomes(List.of(new OutcomeWrite.Complete(first.fencingToken(), Optional.empty(), Optional.of(SLOW_RUN))));
        assertThat(inState(SLOW, JobState.QUEUED)).containsExactlyElementsOf(ids.subList(1, JobStore.WORK_WINDOW + 1));
        assertThat(inState(SLOW, JobState.HELD)).containsExactlyElementsOf(ids.subList(JobStore.WORK_WINDOW + 1, ids.size()));

        // Runs far shorter than estimated refund the tenant; its own jobs still run in their order.
        List<JobId> order = new ArrayList<>(List.of(first.id()));
        for (int i = 1; i < ids.size(); i++) {
            Job job = store().claim(new ClaimRequest(List.of(Q), W1, 1, LEASE)).getFirst();
            order.add(job.id());
            Duration ran = i < 3 ? Duration.ofSeconds(5) : Duration.ZERO;
            store().recordOutcomes(List.of(new OutcomeWrite.Complete(job.fencingToken(), Optional.empty(), Optional.of(ran))));
        }
        assertThat(order).containsExactlyElementsOf(ids);
    }

    @Test
    void aCapStillHoldsInAWorkQueue() {
        store().configureQueue(Q, Fairness.WORK);
        store().configureTenant(TenantUpdate.cap(SLOW, Q, Optional.of(MaxRunning.of(2))));
        enqueue(SLOW, TASK, 10);
        assertThat(inState(SLOW, JobState.QUEUED)).as("no run measured yet: one").hasSize(1);
        Job first = store().claim(new ClaimRequest(List.of(Q), W1, 10, LEASE)).getFirst();
        store().recordOutcomes(List.of(new OutcomeWrite.Complete(first.fencingToken(), Optional.empty(), Optional.of(SLOW_RUN))));
        assertThat(inState(SLOW, JobState.QUEUED)).as("measured: the cap, not the window, bounds it").hasSize(2);
        List<Job> running = store().claim(new ClaimRequest(List.of(Q), W1, 10, LEASE));
        assertThat(running).hasSize(2);
        store().recordOutcomes(List.of(new OutcomeWrite.Complete(running.getFirst().fencingToken(), Optional.empty(),
                Optional.of(Duration.ofMillis(3)))));
        assertThat(inState(SLOW, JobState.QUEUED)).as("one slot freed, one job released").hasSize(1);
        assertThat(store().claim(new ClaimRequest(List.of(Q), W1, 10, LEASE))).hasSize(1);
    }

    @Test
    void settingAQueueBackToJobsReleasesWhatOnlyTheWindowHeld() {
        store().configureQueue(Q, Fairness.WORK);
        enqueue(SLOW, TASK, JobStore.WORK_WINDOW + 5);
        assertThat(inState(SLOW, JobState.HELD)).hasSize(JobStore.WORK_WINDOW + 4);
        assertThat(store().configureQueue(Q, Fairness.JOBS)).isEqualTo(new QueueSettings(Q, Fairness.JOBS, Retention.DEFAULT));
        assertThat(inState(SLOW, JobState.HELD)).isEmpty();
        assertThat(inState(SLOW, JobState.QUEUED)).hasSize(JobStore.WORK_WINDOW + 5);
        QueueName other = QueueName.of("other");
        assertThat(store().configureQueue(other, Fairness.WORK)).isEqualTo(new QueueSettings(other, Fairness.WORK, Retention.DEFAULT));
    }

    /**
     * A run tagged while the queue charged by work ends after it was set back to jobs: its measured time
     * must not move the tenant's last tag, which now counts jobs (10 s would put it 10,000 jobs behind).
     */
    @Test
    void aWorkRunEndingAfterTheQueueIsSetBackToJobsIsNotChargedInJobs() {
        store().configureQueue(Q, Fairness.WORK);
        enqueue(SLOW, TASK, 1);
        Job running = store().claim(new ClaimRequest(List.of(Q), W1, 1, LEASE)).getFirst();
        store().configureQueue(Q, Fairness.JOBS);
        enqueue(FAST, TASK, 100);
        store().recordOutcomes(List.of(new OutcomeWrite.Complete(running.fencingToken(), Optional.empty(),
                Optional.of(Duration.ofSeconds(10)))));
        enqueue(SLOW, TASK, 1);
        assertThat(store().claim(new ClaimRequest(List.of(Q), W1, 10, LEASE))).extracting(Job::tenant)
                .as("slow's job interleaves with fast's backlog").contains(SLOW);
    }

    /** A measured run's completion, as a worker reports it. */
    void complete(Job run, Duration ran) {
        store().recordOutcomes(List.of(new OutcomeWrite.Complete(run.fencingToken(), Optional.empty(), Optional.of(ran))));
    }

    @Test
    void retriesDelayedJobsAndRevivedDeadJobsPassThroughTheWindowToo() {
        store().configureQueue(Q, Fairness.WORK);
        enqueue(SLOW, TASK, 2);
        Job first = store().claim(new ClaimRequest(List.of(Q), W1, 10, LEASE)).getFirst();
        store().fail(first.fencingToken(), "boom", JobStoreContract.RETRY_IN_1S);
        assertThat(inState(SLOW, JobState.QUEUED)).as("the failure released the second job").hasSize(1);
        Job second = store().claim(new ClaimRequest(List.of(Q), W1, 10, LEASE)).getFirst();
        complete(second, SLOW_RUN);

        advanceTime(JobStoreContract.RETRY_DUE);
        store().promoteDue(100);
        assertThat(inState(SLOW, JobState.QUEUED)).as("the retry, promoted, is tagged").containsExactly(first.id());
        Job retried = store().claim(new ClaimRequest(List.of(Q), W1, 10, LEASE)).getFirst();
        store().fail(retried.fencingToken(), "gone", JobStoreContract.DEAD);
        assertThat(store().retryDead(retried.id())).isInstanceOf(RetryResult.Requeued.class);
        assertThat(inState(SLOW, JobState.QUEUED)).as("a revived dead job is tagged").containsExactly(first.id());
        assertThat(store().claim(new ClaimRequest(List.of(Q), W1, 10, LEASE))).extracting(Job::id).containsExactly(first.id());
    }
}
