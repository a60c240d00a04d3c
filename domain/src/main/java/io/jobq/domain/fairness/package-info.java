/**
 * Fair scheduling across tenants: a tenant's {@link io.jobq.domain.fairness.TenantWeight}. The start tags
 * themselves (start-time fair queuing, computed when a job becomes runnable) are computed by the store in the
 * same statement that charges the tenant: {@code FairTags} in the PostgreSQL adapter is their one home.
 */
package io.jobq.domain.fairness;
