package io.jobq.postgres;

import io.jobq.application.port.JobQueueException;

/**
 * The database aborted the statement because of a concurrent transaction (serialization failure,
 * SQLSTATE 40001, or deadlock, 40P01). Nothing was written; retrying the whole transaction is safe.
 * Seen by {@link JobClient} callers whose own transaction runs at REPEATABLE READ or SERIALIZABLE and
 * races another enqueue of the same idempotency key.
 */
public class ConcurrentUpdateException extends JobQueueException {
    private static final long serialVersionUID = 1L;

    public ConcurrentUpdateException(String operation, Throwable cause) {
        super(operation + " conflicted with a concurrent transaction; retry the transaction", cause);
    }
}
