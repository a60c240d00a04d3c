package io.jobq.bench;

/** An experiment could not produce its measurement (timeout, a worker process failing, a bad check). */
public final class BenchException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public BenchException(String message) {
        super(message);
    }

    public BenchException(String message, Throwable cause) {
        super(message, cause);
    }
}
