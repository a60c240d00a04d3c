package io.jobq.bench;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One process of the REAL launcher ({@code java -cp jobq.jar:<bench handlers> io.jobq.bootstrap.Main <role> …}),
 * as the chaos experiments start, kill and replace them; its output goes to a shared {@link Log}, and
 * {@link #ready()} turns true once it has printed its ready line (e.g. "worker chaos-3 started").
 *
 * @param name how the log and the report name it
 */
record LauncherProcess(String name, Process process, AtomicBoolean up) {

    /** Whether it printed its ready line and still runs. */
    boolean ready() {
        return up.get() && process.isAlive();
    }

    long pid() {
        return process.pid();
    }

    /**
     * Starts one launcher process. Nothing of this JVM's environment that jobq reads is inherited (in the compose
     * image the worker service sets JOBQ_METRICS_PORT, and every worker after the first would fail to bind it).
     *
     * @param handlerClasses a directory from {@link #extractHandlerClasses()}, put after jobq.jar
     * @param args the role and its flags
     * @param env variables to set, e.g. DATABASE_URL
     * @param readyLine a piece of the line that says it is up
     */
    static LauncherProcess start(String name, Path jobqJar, Path handlerClasses, List<String> args, Map<String, String> env,
                                 Log log, String readyLine) {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>(List.of(java,
                // Small, quick-starting JVMs: several of them share two cores with PostgreSQL and the bench.
                "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                // The real launcher, plus only the bench's handlers (not the whole bench jar, which would
                // double every class on the classpath and slow each start).
                "-cp", jobqJar + File.pathSeparator + handlerClasses, "io.jobq.bootstrap.Main"));
        cmd.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().keySet().removeIf(k -> k.startsWith("JOBQ_") || k.equals("PORT") || k.equals("DATABASE_URL"));
        pb.environment().putAll(env);
        Process p;
        try {
            p = pb.start();
        } catch (IOException e) {
            throw new BenchException("cannot start " + name + " (" + String.join(" ", cmd) + "): " + e.getMessage(), e);
        }
        AtomicBoolean up = new AtomicBoolean();
        Thread.ofVirtual().name("log-" + name).start(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    if (line.contains(readyLine)) up.set(true);
                    log.write(name, line);
                }
            } catch (IOException e) {
                // the process was killed mid-line: nothing more to read
            }
        });
        return new LauncherProcess(name, p, up);
    }

    /** SIGKILL (no shutdown hook, no drain), waiting up to 10 s for it to be gone. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    /** SIGTERM to every survivor (the launcher drains and exits 0), SIGKILL after 15 s. */
    static void stopAll(List<LauncherProcess> processes) {
        for (LauncherProcess p : processes) p.process.destroy();
        for (LauncherProcess p : processes) {
            try {
                if (!p.process.waitFor(15, TimeUnit.SECONDS)) p.process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                p.process.destroyForcibly();
            }
        }
    }

    /**
     * Copies {@link ChaosHandlers} and its service registration out of this jar into a fresh directory,
     * which goes on the launcher's classpath after jobq.jar.
     */
    static Path extractHandlerClasses() throws IOException {
        Path dir = Files.createTempDirectory("jobq-bench-handlers-");
        for (String resource : List.of("io/jobq/bench/ChaosHandlers.class", "io/jobq/bench/ChaosHandlers$Effects.class",
                "META-INF/services/io.jobq.application.worker.JobHandlerProvider")) {
            try (InputStream in = LauncherProcess.class.getClassLoader().getResourceAsStream(resource)) {
                if (in == null) throw new IOException("resource " + resource + " is missing from the bench classpath");
                Path target = dir.resolve(resource);
                Files.createDirectories(target.getParent());
                Files.copy(in, target);
            }
        }
        return dir;
    }

    static void deleteTree(Path dir) {
        try (var paths = Files.walk(dir)) {
            paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // a temp directory left behind is harmless
        }
    }

    /** Every process's output, each line prefixed with the process's name, in one file. */
    static final class Log implements AutoCloseable {
        private final Path file;
        private final BufferedWriter out;

        Log(Path file) throws IOException {
            this.file = file;
            this.out = Files.newBufferedWriter(file, StandardCharsets.UTF_8);
        }

        Path file() {
            return file;
        }

        synchronized void write(String process, String line) {
            try {
                out.write(process + " | " + line);
                out.newLine();
            } catch (IOException e) {
                // losing a log line must not stop the experiment
            }
        }

        synchronized void flush() {
            try {
                out.flush();
            } catch (IOException e) {
                // as above
            }
        }

        @Override
        public synchronized void close() throws IOException {
            out.close();
        }
    }
}
