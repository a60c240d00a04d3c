package io.jobq.postgres.testing;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * A real PgBouncer in front of one test database, as a subprocess on a free local port, with its own
 * temporary configuration: {@code auth_type = trust} towards the test (the user is listed in an auth
 * file, as PgBouncer requires), the database's own credentials towards PostgreSQL. Stop it with
 * {@link #close()}; a JVM shutdown hook stops it too, so a crashed test leaves no process behind.
 *
 * <p>The binary is {@code $JOBQ_PGBOUNCER}, else {@code pgbouncer} on the PATH, else
 * {@code /usr/sbin/pgbouncer} (Debian's package, which {@code .ci/run} installs). Missing: the test
 * fails, saying how to install it; never skipped. PgBouncer refuses to run as root, so as root it is
 * started with {@code -u nobody} (it reads its files before switching user).
 */
public final class PgBouncer implements AutoCloseable {
    /** Environment variable naming the pgbouncer binary, when it is not on the PATH. */
    public static final String ENV = "JOBQ_PGBOUNCER";
    private static final Duration START_TIMEOUT = Duration.ofSeconds(10);

    /** PgBouncer's {@code pool_mode}: when a server session goes back to its pool. */
    public enum PoolMode { SESSION, TRANSACTION }

    private final TestDatabase db;
    private final int poolSize;
    private final Path dir;
    private final int port;
    private final Thread shutdownHook = new Thread(this::stop, "stop-test-pgbouncer");
    private Process process;

    private PgBouncer(TestDatabase db, int poolSize, Path dir, int port) {
        this.db = db;
        this.poolSize = poolSize;
        this.dir = dir;
        this.port = port;
    }

    /**
     * Starts PgBouncer in {@code mode} for {@code db}, with at most {@code poolSize} server sessions.
     *
     * @throws IllegalStateException if pgbouncer is not installed or does not start within 10 s (with its log)
     */
    public static PgBouncer start(TestDatabase db, PoolMode mode, int poolSize) {
        try {
            PgBouncer b = new PgBouncer(db, poolSize, Files.createTempDirectory("jobq-pgbouncer"), freePort());
            Runtime.getRuntime().addShutdownHook(b.shutdownHook);
            try {
                b.launch(mode);
            } catch (RuntimeException e) {
                b.close(); // the exception carries PgBouncer's log
                throw e;
            }
            return b;
        } catch (IOException e) {
            throw new IllegalStateException("cannot prepare PgBouncer: " + e.getMessage(), e);
        }
    }

    /** A JDBC URL of the test database through this PgBouncer; {@code params} (e.g. {@code "prepareThreshold=0"}) are appended. */
    public String jdbcUrl(String... params) {
        StringBuilder url = new StringBuilder("jdbc:postgresql://127.0.0.1:" + port + "/" + db.name() + "?user=" + server().get("user"));
        for (String p : params) url.append('&').append(p);
        return url.toString();
    }

    /** Stops this PgBouncer (closing every client connection) and starts it again in {@code mode} on the same port. */
    public void restart(PoolMode mode) {
        stop();
        launch(mode);
    }

    /** Stops PgBouncer (its clients see their connections close) and deletes its files. Idempotent. */
    @Override
    public void close() {
        stop();
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException shuttingDown) {
            // the hook is running or has run: nothing to remove
        }
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.toList()) Files.deleteIfExists(f);
            Files.deleteIfExists(dir);
        } catch (IOException e) {
            // a leftover temp directory is harmless
        }
    }

    private synchronized void stop() {
        if (process == null) return;
        process.destroy(); // SIGTERM: PgBouncer's fast exit
        try {
            if (!process.waitFor(5, java.util.concurrent.TimeUnit.SECONDS)) process.destroyForcibly().waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        process = null;
    }

    private synchronized void launch(PoolMode mode) {
        try {
            Map<String, String> s = server();
            Files.writeString(dir.resolve("users.txt"), "\"" + s.get("user") + "\" \"\"\n");
            Files.writeString(dir.resolve("pgbouncer.ini"), """
                    [databases]
                    %s = host=%s port=%s dbname=%s user=%s%s
                    [pgbouncer]
                    listen_addr = 127.0.0.1
                    listen_port = %d
                    unix_socket_dir =
                    auth_type = trust
                    auth_file = %s
                    pool_mode = %s
                    default_pool_size = %d
                    ignore_startup_parameters = extra_float_digits
                    """.formatted(db.name(), s.get("host"), s.get("port"), db.name(), s.get("user"),
                    s.containsKey("password") ? " password=" + s.get("password") : "",
                    port, dir.resolve("users.txt"), mode.name().toLowerCase(), poolSize));
            List<String> command = new ArrayList<>(List.of(binary().toString()));
            if ("root".equals(System.getProperty("user.name"))) command.addAll(List.of("-u", "nobody"));
            command.add(dir.resolve("pgbouncer.ini").toString());
            Path log = dir.resolve("pgbouncer.log");
            process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            awaitListening(log);
        } catch (IOException e) {
            throw new IllegalStateException("cannot start PgBouncer: " + e.getMessage(), e);
        }
    }

    private void awaitListening(Path log) throws IOException {
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("PgBouncer exited with " + process.exitValue() + ": " + Files.readString(log));
            }
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
                return;
            } catch (IOException notYet) {
                sleep(50);
            }
        }
        throw new IllegalStateException("PgBouncer did not listen on port " + port + " within " + START_TIMEOUT + ": "
                + Files.readString(log, StandardCharsets.UTF_8));
    }

    /** The test server's host, port, user and password (if any), from the database's JDBC URL. */
    private Map<String, String> server() {
        URI uri = URI.create(db.jdbcUrl().substring("jdbc:".length()));
        Map<String, String> s = new HashMap<>();
        s.put("host", uri.getHost());
        s.put("port", Integer.toString(uri.getPort() < 0 ? 5432 : uri.getPort()));
        if (uri.getQuery() != null) {
            for (String kv : uri.getQuery().split("&")) {
                String[] p = kv.split("=", 2);
                if (p.length == 2 && (p[0].equals("user") || p[0].equals("password"))) s.put(p[0], p[1]);
            }
        }
        s.putIfAbsent("user", System.getProperty("user.name"));
        return s;
    }

    private static Path binary() {
        Optional<Path> fromEnv = Optional.ofNullable(System.getenv(ENV)).filter(v -> !v.isBlank()).map(Path::of);
        if (fromEnv.isPresent()) {
            if (Files.isExecutable(fromEnv.get())) return fromEnv.get();
            throw new IllegalStateException(ENV + "=" + fromEnv.get() + " is not an executable file");
        }
        Stream<Path> onPath = Stream.of(System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator))
                .filter(d -> !d.isEmpty()).map(d -> Path.of(d, "pgbouncer"));
        return Stream.concat(onPath, Stream.of(Path.of("/usr/sbin/pgbouncer")))
                .filter(Files::isExecutable).findFirst()
                .orElseThrow(() -> new IllegalStateException("""
                        The pooler tests need a real PgBouncer and none was found (on the PATH or at /usr/sbin/pgbouncer). \
                        Install it (Debian/Ubuntu: apt-get install pgbouncer; .ci/run does) or set %s to the binary."""
                        .formatted(ENV)));
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for PgBouncer", e);
        }
    }
}
