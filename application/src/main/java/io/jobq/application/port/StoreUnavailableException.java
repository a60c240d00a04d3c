package io.jobq.application.port;

/**
 * The store could not be reached: no connection within the pool timeout, the connection dropped,
 * or the server is shutting down or restarting. Retrying later may succeed; the HTTP layer answers
 * 503 with Retry-After. Adapters translate driver exceptions into this; no {@code SQLException}
 * crosses a port.
 */
public class StoreUnavailableException extends JobQueueException {
    private static final long serialVersionUID = 1L;

    private final String operation;

    /** @param operation what was being done, e.g. "enqueue" or "claim" */
    public StoreUnavailableException(String operation, Throwable cause) {
        super("the job store is unavailable (" + operation + "): " + rootMessage(cause), cause);
        this.operation = operation;
    }

    public String operation() {
        return operation;
    }

    /** The root cause with its type, e.g. "ConnectException: Connection refused": the type says why here. */
    private static String rootMessage(Throwable t) {
        Throwable root = Throwables.rootCause(t);
        return root.getClass().getSimpleName() + (root.getMessage() == null ? "" : ": " + root.getMessage());
    }
}
