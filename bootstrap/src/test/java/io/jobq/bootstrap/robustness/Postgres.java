package io.jobq.bootstrap.robustness;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/** The local PostgreSQL cluster (Debian's pg_ctlcluster): restart it, and never leave it stopped. */
final class Postgres {
    private Postgres() {}

    /** The cluster version: the one directory in /etc/postgresql (e.g. "15"). */
    static String version() {
        try (Stream<Path> dirs = Files.list(Path.of("/etc/postgresql"))) {
            return dirs.map(p -> p.getFileName().toString()).sorted().findFirst()
                    .orElseThrow(() -> new IllegalStateException("no cluster in /etc/postgresql"));
        } catch (IOException e) {
            throw new IllegalStateException("cannot list /etc/postgresql", e);
        }
    }

    /** {@code pg_ctlcluster … main restart}; whatever happens, the server is running again afterwards. */
    static void restart(Path log) {
        try {
            run(log, "pg_ctlcluster", "--skip-systemctl-redirect", version(), "main", "restart");
        } finally {
            ensureRunning(log);
        }
    }

    /** Starts the cluster if it is down, and waits until it accepts connections. */
    static void ensureRunning(Path log) {
        if (!isReady()) {
            run(log, "pg_ctlcluster", "--skip-systemctl-redirect", version(), "main", "start");
        }
        Await.condition(Duration.ofSeconds(60), "PostgreSQL accepts connections", Postgres::isReady);
    }

    static boolean isReady() {
        try {
            Process p = new ProcessBuilder("pg_isready", "-h", "127.0.0.1", "-q").start();
            return p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static void run(Path log, String... command) {
        try {
            File out = log.toFile();
            Process p = new ProcessBuilder(List.of(command)).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(out)).start();
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(String.join(" ", command) + " did not finish within 120 s");
            }
            if (p.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", command) + " exited " + p.exitValue() + "; see " + log);
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + String.join(" ", command), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
