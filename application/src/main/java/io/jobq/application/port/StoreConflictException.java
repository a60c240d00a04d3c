package io.jobq.application.port;

/**
 * The store aborted an operation because a concurrent transaction got in its way (on PostgreSQL: a
 * serialization failure, SQLSTATE 40001, or a detected deadlock, 40P01; or an idempotency key that
 * kept racing). Nothing was written. A store that runs its own transactions (PostgresJobStore) has
 * already retried a few times before it throws this, and running the operation again later will
 * usually succeed; the HTTP layer answers 503 with {@code Retry-After}. Where the transaction is the
 * caller's (JobClient), the caller must roll back and retry its whole transaction: repeating one
 * statement inside the same snapshot fails again.
 */
public class StoreConflictException extends JobQueueException {
    private static final long serialVersionUID = 1L;

    private final String operation;

    /** @param operation what was being done, e.g. "enqueue" or "set tenant weight" */
    public StoreConflictException(String operation, Throwable cause) {
        super(operation + " conflicted with a concurrent transaction and was rolled back; retry it", cause);
        this.operation = operation;
    }

    public String operation() {
        return operation;
    }
}
