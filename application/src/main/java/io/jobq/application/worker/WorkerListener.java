package io.jobq.application.worker;

import io.jobq.domain.job.Job;
import io.jobq.domain.lease.FencingToken;
import java.util.List;
import java.util.Set;

/**
 * Observes a {@link Worker}, for metrics and for tests that wait on events instead of sleeping.
 * Every method has a no-op default. Callbacks run on the worker's own threads (claim loop, job
 * threads, heartbeat, maintenance) and must return quickly; anything a callback throws, an Error
 * too, is logged and otherwise ignored, so a faulty listener cannot stop the worker (a fatal error,
 * see {@link FatalErrorPolicy}, goes to the worker's policy first).
 */
public interface WorkerListener {
    /** A listener that ignores everything. */
    WorkerListener NONE = new WorkerListener() {};

    /** One claim returned {@code jobs} (1 or more, now running on this worker). */
    default void claimed(List<Job> jobs) {}

    /** A run's success was recorded; {@code job} is the row after it (done). */
    default void completed(Job job) {}

    /**
     * A run's failure was recorded.
     *
     * @param claimed the job as this run claimed it
     * @param error the failure message sent to the store (before the store's own sanitising)
     * @param recorded the row after it: scheduled for a retry, or dead
     */
    default void failed(Job claimed, String error, Job recorded) {}

    /**
     * A run's outcome was recorded (after {@link #completed} or {@link #failed}): per-task metrics.
     *
     * @param recorded the row after it: done, scheduled for a retry, dead, or cancelled
     * @param ran how long the handler ran, by the worker's monotonic clock
     */
    default void runEnded(Job recorded, java.time.Duration ran) {}

    /** A run's outcome was not recorded; see {@link DiscardReason}. */
    default void discarded(FencingToken token, DiscardReason reason) {}

    /** Jobs claimed ahead of a free slot were given back to the store unrun at shutdown ({@link WorkerSettings#prefetch()}). */
    default void released(List<FencingToken> tokens) {}

    /**
     * One heartbeat statement ran.
     *
     * @param extended how many leases were extended
     * @param lost the runs that no longer hold their lease (their contexts are now cancelled)
     */
    default void heartbeat(int extended, Set<FencingToken> lost) {}

    /** One maintenance pass ended: jobs reaped (expired leases) and promoted (due scheduled jobs). */
    default void maintenance(int reaped, int promoted) {}

    /**
     * A maintenance pass failed; it is retried next period. An {@link Error} from the store arrives
     * wrapped in a {@link io.jobq.application.port.JobQueueException}, as in {@link #storeError}.
     */
    default void maintenanceError(RuntimeException e) {}

    /**
     * A store call failed; the worker backs off (claims, heartbeats) or retries (outcome writes).
     *
     * @param operation "claim", "heartbeat", "complete" or "fail"
     * @param e what the call threw; an {@link Error} arrives wrapped in a
     *     {@link io.jobq.application.port.JobQueueException} whose cause it is
     */
    default void storeError(String operation, RuntimeException e) {}

    /**
     * {@link Worker#close()} finished: this worker claims, heartbeats and maintains no more. (A run
     * that was already writing its outcome at the grace deadline may still finish that write.)
     */
    default void stopped() {}
}
