package io.jobq.bootstrap.robustness;

import io.jobq.application.fake.Await;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One real {@code java -jar target/jobq.jar <role> …} process, its output captured to
 * {@code target/it-logs/<test class>/<name>.log}. Signals go through {@code kill -<SIG> <pid>}.
 * {@link #close()} SIGKILLs the process if it is still alive (after a SIGCONT, in case it was stopped).
 */
final class JobqProcess implements AutoCloseable {
    private final String name;
    private final Process process;
    private final Path log;

    private JobqProcess(String name, Process process, Path log) {
        this.name = name;
        this.process = process;
        this.log = log;
    }

    /** Starts building a process of the given test class, named {@code name} in its log file. */
    static Builder builder(Class<?> testClass, String name, String databaseUrl) {
        return new Builder(testClass, name, databaseUrl);
    }

    static final class Builder {
        private final Class<?> testClass;
        private final String name;
        private final Map<String, String> env = new LinkedHashMap<>();
        private final List<String> args = new ArrayList<>();
        private final List<String> jvmOptions = new ArrayList<>();
        private final List<Path> plugins = new ArrayList<>();

        private Builder(Class<?> testClass, String name, String databaseUrl) {
            this.testClass = testClass;
            this.name = name;
            env.put("DATABASE_URL", databaseUrl);
        }

        Builder args(String... more) {
            args.addAll(List.of(more));
            return this;
        }

        /** Options for the JVM, e.g. {@code -Xmx96m} (an {@code -Xmx} here replaces the default 256 MB). */
        Builder jvmOptions(String... options) {
            jvmOptions.addAll(List.of(options));
            return this;
        }

        /**
         * Jars to put on the class path beside jobq.jar (handler plug-ins): the JVM then runs
         * {@code java -cp jobq.jar:<jars> io.jobq.bootstrap.Main …}, as README's plug-in example does,
         * instead of {@code java -jar jobq.jar …}.
         */
        Builder plugins(Path... jars) {
            plugins.addAll(List.of(jars));
            return this;
        }

        /**
         * Runs the JVM with its wall clock shifted by {@code offset} (libfaketime, found by {@link LibFaketime};
         * e.g. "-300s").
         */
        /** An environment variable of the process. */
        Builder env(String name, String value) {
            env.put(name, value);
            return this;
        }

        Builder fakeTime(String offset) {
            env.put("LD_PRELOAD", LibFaketime.path().toString());
            env.put("FAKETIME", offset);
            // The JVM times its waits with the monotonic clock: leave it real.
            env.put("FAKETIME_DONT_FAKE_MONOTONIC", "1");
            return this;
        }

        JobqProcess start() {
            Path dir = Path.of(System.getProperty("jobq.logs", "target/it-logs"), testClass.getSimpleName());
            Path jar = Path.of(System.getProperty("jobq.jar", "target/jobq.jar"));
            if (!Files.isRegularFile(jar)) throw new IllegalStateException(jar + " is missing: run mvn package first");
            try {
                Files.createDirectories(dir);
                Path log = dir.resolve(name + ".log");
                List<String> command = new ArrayList<>(List.of(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        // start-up speed on a busy 2-core machine; behaviour is unaffected
                        "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"));
                if (jvmOptions.stream().noneMatch(o -> o.startsWith("-Xmx"))) command.add("-Xmx256m");
                command.addAll(jvmOptions);
                if (plugins.isEmpty()) {
                    command.addAll(List.of("-jar", jar.toString()));
                } else {
                    List<String> classPath = new ArrayList<>(List.of(jar.toString()));
                    plugins.forEach(p -> classPath.add(p.toString()));
                    command.addAll(List.of("-cp", String.join(java.io.File.pathSeparator, classPath), "io.jobq.bootstrap.Main"));
                }
                command.addAll(args);
                ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true)
                        .redirectOutput(ProcessBuilder.Redirect.to(log.toFile()));
                pb.environment().remove("JOBQ_TEST_DATABASE_URL");
                pb.environment().putAll(env);
                Files.writeString(log, "");
                return new JobqProcess(name, pb.start(), log);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    String name() {
        return name;
    }

    long pid() {
        return process.pid();
    }

    boolean isAlive() {
        return process.isAlive();
    }

    Path logFile() {
        return log;
    }

    /** Sends {@code SIG<signal>} (TERM, KILL, STOP, CONT) with {@code kill}. */
    void signal(String signal) {
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid())).inheritIO().start();
            if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new IllegalStateException("kill -" + signal + " " + pid() + " failed");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** SIGKILL, then waits for the process to be gone. */
    void kill() {
        signal("KILL");
        awaitExit(Duration.ofSeconds(30));
    }

    /** @return the exit code; fails the test if the process is still alive after {@code timeout} */
    int awaitExit(Duration timeout) {
        try {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new AssertionError(name + " did not exit within " + timeout + "; log " + log);
            }
            return process.exitValue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** The whole output so far. */
    String output() {
        try {
            return Files.readString(log, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Lines of the output containing every one of {@code parts}. */
    List<String> lines(String... parts) {
        return output().lines().filter(l -> {
            for (String p : parts) if (!l.contains(p)) return false;
            return true;
        }).toList();
    }

    /** Waits until a line containing all of {@code parts} appears; fails if the process dies first. */
    String awaitLine(Duration timeout, String... parts) {
        return Await.value(timeout, name + " logs a line with " + List.of(parts) + " (log " + log + ")", () -> {
            List<String> found = lines(parts);
            if (!found.isEmpty()) return found.getFirst();
            if (!process.isAlive()) throw new AssertionError(name + " exited with " + process.exitValue()
                    + " before logging " + List.of(parts) + ":\n" + output());
            return null;
        });
    }

    @Override
    public void close() {
        if (!process.isAlive()) return;
        try {
            new ProcessBuilder("kill", "-CONT", Long.toString(pid())).start().waitFor(10, TimeUnit.SECONDS);
        } catch (IOException e) {
            // it is killed below anyway
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        process.destroyForcibly();
        try {
            process.waitFor(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** A TCP port free right now on 127.0.0.1. */
    static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
