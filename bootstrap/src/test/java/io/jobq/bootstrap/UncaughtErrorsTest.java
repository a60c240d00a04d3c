package io.jobq.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

class UncaughtErrorsTest {
    record Fatal(String where, Throwable error) {}

    final List<Fatal> fatals = new CopyOnWriteArrayList<>();
    final UncaughtErrors handler = new UncaughtErrors((where, error) -> fatals.add(new Fatal(where, error)));

    /** Runs {@code body} on a new thread that has the handler under test (not the JVM-wide default). */
    void dieOnAThread(String name, Runnable body) throws InterruptedException {
        Thread t = Thread.ofPlatform().name(name).uncaughtExceptionHandler(handler).start(body);
        t.join(10_000);
        assertThat(t.isAlive()).isFalse();
    }

    @Test
    void anOutOfMemoryErrorInAThreadJobqDoesNotOwnGoesToTheFatalPolicy() throws InterruptedException {
        OutOfMemoryError oom = new OutOfMemoryError("Java heap space");
        dieOnAThread("HikariPool-1 housekeeper", () -> {
            throw oom;
        });

        assertThat(fatals).containsExactly(new Fatal("a thread's uncaught throwable", oom));
    }

    @Test
    void otherThrowablesAreOnlyLogged() throws InterruptedException {
        dieOnAThread("some-library-thread", () -> {
            throw new StackOverflowError();
        });
        dieOnAThread("another-library-thread", () -> {
            throw new IllegalStateException("bug");
        });

        assertThat(fatals).isEmpty();
    }
}
