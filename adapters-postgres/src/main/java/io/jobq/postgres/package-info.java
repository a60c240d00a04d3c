/**
 * The PostgreSQL adapter: {@link io.jobq.postgres.PostgresJobStore} (the {@code JobStore} port),
 * {@link io.jobq.postgres.JobClient} (enqueue inside the caller's own transaction), the schema
 * migrations ({@link io.jobq.postgres.Migrations}) and pool set-up. jOOQ classes generated from the
 * Flyway scripts live in {@code io.jobq.postgres.schema}. Nothing outside bootstrap and bench may
 * depend on this package; no jOOQ or JDBC type crosses its public port methods.
 */
package io.jobq.postgres;
