/** Tenants: who a job belongs to, for fairness and idempotency scoping. */
package io.jobq.domain.tenant;
