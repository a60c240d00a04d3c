package io.jobq.application.port;

/**
 * The store aborted an operation because a concurrent transaction got in its way (on PostgreSQL: a
 * serialization failure, SQLSTATE 40001, or a detected deadlock, 40P01). Nothing was written, so
 * running the same operation again is safe and will usually succeed. Adapters retry a few times
 * themselves before they give up with this; the HTTP layer answers 503 with {@code Retry-After}.
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
