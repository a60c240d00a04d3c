/**
 * The ports: {@link io.jobq.application.port.JobStore} (all persistence) and
 * {@link io.jobq.application.port.WakeupChannel} (wake-ups for idle workers), with the request and
 * result types that cross them. Adapters implement these; nothing here names a technology.
 */
package io.jobq.application.port;
