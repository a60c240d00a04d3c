package io.jobq.application.worker;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Optional;

/**
 * Runs the jobs of one task. Called on a virtual thread of its own, once per run (attempt) of a
 * job; the same instance serves many jobs concurrently, so it must be thread-safe.
 *
 * <p>Outcomes:
 * <ul>
 *   <li>returns normally: the job is done, with the returned JSON as its result ({@code Optional.empty()}
 *       for none; a {@code null} return is treated as empty);
 *   <li>throws {@link PermanentJobFailure}: the job is dead at once, whatever attempts it has left
 *       (bad input, a refused request: retrying cannot help);
 *   <li>throws anything else: a retryable failure; the job is retried with backoff until its
 *       {@code max_attempts} are used up, then dead.
 * </ul>
 *
 * <p>Delivery is at-least-once: a run whose outcome could not be recorded (worker crash, lost
 * lease) is run again, so handlers must be idempotent. Pass {@link JobContext#jobId()} downstream
 * as an idempotency key for side effects. Long handlers should poll {@link JobContext#isCancelled()}
 * and respond to interruption: a cancelled run's outcome is discarded.
 */
@FunctionalInterface
public interface JobHandler {

    /**
     * Runs one attempt of a job.
     *
     * @return the job's JSON result, or empty for none
     * @throws PermanentJobFailure to send the job straight to dead
     * @throws Exception any other failure, retried with backoff
     */
    Optional<JsonNode> handle(JobContext ctx) throws Exception;
}
