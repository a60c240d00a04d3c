/** Leases (who may run a job, until when) and fencing tokens (which run a write belongs to). */
package io.jobq.domain.lease;
