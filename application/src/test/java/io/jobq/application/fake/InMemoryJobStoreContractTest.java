package io.jobq.application.fake;

import io.jobq.application.port.JobStore;
import io.jobq.application.port.JobStoreContract;
import java.time.Duration;
import java.time.Instant;

/** The fake must keep the port's contract exactly as the PostgreSQL store does: the worker's tests trust it. */
class InMemoryJobStoreContractTest extends JobStoreContract {
    final ManualClock clock = new ManualClock();
    final InMemoryJobStore store = new InMemoryJobStore(clock);

    @Override
    protected JobStore store() {
        return store;
    }

    @Override
    protected Instant storeNow() {
        return clock.instant();
    }

    @Override
    protected void advanceTime(Duration by) {
        clock.advance(by);
    }
}
