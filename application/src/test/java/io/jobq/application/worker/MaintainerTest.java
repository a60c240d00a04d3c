package io.jobq.application.worker;

import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.application.fake.Await;
import io.jobq.application.port.JobStore;
import io.jobq.application.port.NewJob;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.JobState;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** {@link Maintainer}: reaps others' expired leases but not its own worker's unheard ones, promotes, survives a failing step or a failed ask for the upkeep turn. */
class MaintainerTest extends WorkerFixture {

    /**
     * Heartbeats fail for longer than the lease, and the store's clock passes the lease's expiry. The worker
     * still holds the run: its own maintainer must not reap it (that would burn an attempt of a run that is
     * alive), and once heartbeats get through again the lease is extended and the run ends done on its first
     * attempt. With the guard removed, the maintainer reaps the run within one period and the test fails.
     */
    @Test
    void aWorkerDoesNotReapItsOwnRunWhileItsHeartbeatsAreFailingAndKeepsItOnceTheyResume() {
        Duration lease = Duration.ofMillis(300);
        JobId id = enqueue("block", "{}");
        start(FAST.toBuilder().lease(lease).heartbeatInterval(Duration.ofMillis(50)).build());
        Await.until(SOON, "the job running", () -> blocking.invocations.get() == 1);

        store.setAvailable("heartbeat", false);
        // Real time passes the lease, so the worker knows its lease may have lapsed; then the store's does.
        Await.holdsWithin(lease.multipliedBy(2), () -> false);
        clock.advance(Duration.ofSeconds(1));
        Await.holdsWithin(Duration.ofMillis(500), () -> false); // about ten maintenance periods

        Job held = store.require(id);
        assertThat(held.state()).as("reaped by its own worker: %s", held).isEqualTo(JobState.RUNNING);
        assertThat(held.attempts()).isEqualTo(1);

        store.setAvailable("heartbeat", true);
        Await.until(SOON, "a heartbeat through", () -> store.require(id).lease().orElseThrow().expiry()
                .isAfter(clock.instant()));
        blocking.release.countDown();
        assertThat(awaitState(id, JobState.DONE).attempts()).isEqualTo(1);
    }

    /**
     * Asking for the upkeep turn fails (the store is unreachable for that call): each failure is reported,
     * no pass runs without the turn, and the loop asks again next period: once the store answers, the due
     * job is promoted and run. With the failure swallowed instead of reported the first check fails; with
     * the loop ended by it the last one does.
     */
    @Test
    void aFailedAskForTheTurnIsReportedAndTheNextPeriodAsksAgain() {
        store.setAvailable("takeUpkeepTurn", false);
        JobId delayed = enqueueDueIn5s();
        start(FAST);
        clock.advance(Duration.ofSeconds(6));
        Await.until(SOON, "two failed asks reported", () -> events.maintenanceErrors.get() >= 2);
        assertThat(store.require(delayed).state()).as("promoted without the turn").isEqualTo(JobState.SCHEDULED);

        store.setAvailable("takeUpkeepTurn", true);
        awaitState(delayed, JobState.DONE);
    }

    /**
     * An ask refused for another reason than an outage (here: the turn's table refused to this role, as after
     * a migration whose grants missed it) is reported, and the worker maintains without the turn: one broken
     * statement must not stop the queue's upkeep in every worker. Fails if such a failure skipped the pass.
     */
    @Test
    void anAskRefusedForAnotherReasonIsReportedAndTheWorkerPassesWithoutTheTurn() {
        JobStore refusing = (JobStore) Proxy.newProxyInstance(JobStore.class.getClassLoader(), new Class<?>[] {JobStore.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("takeUpkeepTurn")) {
                        throw new IllegalStateException("permission denied for table upkeep_turn");
                    }
                    try {
                        return method.invoke(store, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
        JobId delayed = enqueueDueIn5s();
        start(Worker.builder(refusing, handlers).settings(FAST).listener(events));
        clock.advance(Duration.ofSeconds(6));

        awaitState(delayed, JobState.DONE);
        assertThat(events.maintenanceErrors.get()).isPositive();
    }

    @Test
    void aReapThatFailsIsReportedAndPromotionStillRuns() {
        store.setAvailable("reapExpiredLeases", false);
        JobId delayed = enqueueDueIn5s();
        start(FAST);
        clock.advance(Duration.ofSeconds(6));

        awaitState(delayed, JobState.DONE);
        assertThat(events.maintenanceErrors.get()).isPositive();
    }

    /** A no-op job scheduled 5 s ahead: only a maintenance pass promotes it once the clock passes that. */
    JobId enqueueDueIn5s() {
        return enqueue(NewJob.of(TENANT, QueueName.DEFAULT, TaskName.of("noop"), "{}").withDelay(Duration.ofSeconds(5)));
    }
}
