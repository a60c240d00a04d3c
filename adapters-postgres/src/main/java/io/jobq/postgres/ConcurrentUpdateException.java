package io.jobq.postgres;

import io.jobq.application.port.StoreConflictException;

/**
 * The database aborted the statement because of a concurrent transaction (serialization failure,
 * SQLSTATE 40001, or deadlock, 40P01). Nothing was written; retrying the whole transaction is safe.
 * {@link PostgresJobStore} retries its own short transactions before it throws this; {@link JobClient}
 * never does, because the transaction is the caller's: callers whose transaction runs at REPEATABLE
 * READ or SERIALIZABLE and races another enqueue of the same idempotency key see this and retry.
 */
public class ConcurrentUpdateException extends StoreConflictException {
    private static final long serialVersionUID = 1L;

    public ConcurrentUpdateException(String operation, Throwable cause) {
        super(operation, cause);
    }
}
