/**
 * The worker runtime: {@link io.jobq.application.worker.Worker} claims jobs from a
 * {@link io.jobq.application.port.JobStore}, runs each on a virtual thread with the
 * {@link io.jobq.application.worker.JobHandler} registered for its task, keeps the leases of the
 * jobs in hand alive with one heartbeat statement, records outcomes fenced by the run's token, and
 * runs the maintenance (reap expired leases, promote due jobs) that every worker shares.
 *
 * <p>Handlers are found by task name in a {@link io.jobq.application.worker.HandlerRegistry}:
 * registered in code (an embedding application constructs them with its own objects), or made by
 * {@link io.jobq.application.worker.JobHandlerProvider}s from
 * {@link io.jobq.application.worker.HandlerSettings}, discovered through {@link java.util.ServiceLoader}
 * by the launcher. The launcher ({@code bootstrap}) and embedding applications construct a
 * {@code Worker}; adapters must not depend on this package.
 */
package io.jobq.application.worker;
