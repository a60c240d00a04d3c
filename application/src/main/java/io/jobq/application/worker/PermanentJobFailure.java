package io.jobq.application.worker;

/**
 * Thrown by a {@link JobHandler} for a failure that retrying cannot fix (invalid payload, a request
 * the downstream service refused for good): the job goes to dead at once, whatever attempts it has
 * left. Its message becomes the job's {@code last_error}. Every other exception is retried.
 */
public class PermanentJobFailure extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public PermanentJobFailure(String message) {
        super(message);
    }

    public PermanentJobFailure(String message, Throwable cause) {
        super(message, cause);
    }
}
