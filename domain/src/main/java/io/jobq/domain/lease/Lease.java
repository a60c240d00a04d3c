package io.jobq.domain.lease;

import java.time.Instant;
import java.util.Objects;

/**
 * A time-limited claim on a running job: {@code owner} may run it until {@code expiry}, an
 * instant of the database clock. A heartbeat pushes the expiry forward; once it passes, any
 * worker's maintenance may reap the job. No row lock is held meanwhile.
 */
public record Lease(WorkerId owner, Instant expiry) {
    public Lease {
        Objects.requireNonNull(owner, "owner");
        Objects.requireNonNull(expiry, "expiry");
    }
}
