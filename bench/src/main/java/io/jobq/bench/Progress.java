package io.jobq.bench;

import java.io.PrintStream;
import java.util.Locale;

/** One line per step on stderr, prefixed with the seconds since the bench started: "[  12.3 s] …". */
public final class Progress {
    private final PrintStream err;
    private final long startNanos;

    public Progress(PrintStream err) {
        this.err = err;
        this.startNanos = System.nanoTime();
    }

    public void step(String format, Object... args) {
        double s = (System.nanoTime() - startNanos) / 1e9;
        err.println(String.format(Locale.ROOT, "[%7.1f s] ", s) + String.format(Locale.ROOT, format, args));
        err.flush();
    }

    /** Seconds since the bench started, by this JVM's monotonic clock. */
    public double elapsedSeconds() {
        return (System.nanoTime() - startNanos) / 1e9;
    }
}
