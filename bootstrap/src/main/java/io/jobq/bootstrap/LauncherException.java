package io.jobq.bootstrap;

/** A start-up failure the launcher reports as one line and exit code 1 (configuration errors use 2). */
final class LauncherException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    LauncherException(String message) {
        super(message);
    }

    LauncherException(String message, Throwable cause) {
        super(message, cause);
    }
}
