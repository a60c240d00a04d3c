package io.jobq.application.port;

/** Root of jobq's infrastructure failures. Unchecked: callers decide where to handle them. */
public class JobQueueException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public JobQueueException(String message) {
        super(message);
    }

    public JobQueueException(String message, Throwable cause) {
        super(message, cause);
    }
}
