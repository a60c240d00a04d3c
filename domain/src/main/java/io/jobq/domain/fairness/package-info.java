/** Fair scheduling across tenants: start-time fair queuing, computed when a job becomes runnable. */
package io.jobq.domain.fairness;
