/**
 * The HTTP API on Javalin: JSON in and out (Jackson's tree model, strict), errors as
 * {@link io.jobq.http.ProblemResponse}, Prometheus metrics (Micrometer). Turns HTTP into calls on the
 * {@link io.jobq.application.port.JobStore} port; it never talks SQL and knows no concrete adapter.
 * Nothing else in jobq may depend on this package except {@code io.jobq.bootstrap}.
 */
package io.jobq.http;
