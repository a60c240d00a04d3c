package io.jobq.postgres.testing;

import com.sun.security.auth.module.UnixSystem;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.jobq.postgres.Migrations;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.UserPrincipal;
import java.nio.file.attribute.UserPrincipalNotFoundException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A PostgreSQL cluster of a test's own, for tests that must stop or restart the server: it never
 * touches the server the other tests share, or any server the user runs.
 *
 * <p>{@link #start} runs {@code initdb} into a new directory {@code <java.io.tmpdir>/jobq-throwaway-pg-…}, starts
 * {@code postgres} on a free port of 127.0.0.1 (its socket in that directory too), creates database
 * {@code jobq} and migrates it. {@link #close} stops the server ({@code -m immediate}: nothing in it is
 * kept), copies its logs to the test's log directory and deletes the directory; a JVM shutdown hook
 * does the same if the test never gets to it, and {@link #start} first removes clusters whose JVM died
 * without either (its pid is written in the directory).
 *
 * <p>initdb and postgres refuse to run as root: when the tests run as root (as CI does), the server
 * programs run as the OS user {@code postgres} ({@code runuser -u postgres --}), which owns the directory.
 * The programs are found by {@link PostgresServerBinaries}.
 */
public final class ThrowawayPostgres implements AutoCloseable {
    private static final String PREFIX = "jobq-throwaway-pg-";
    private static final String OWNER_FILE = "jvm.pid";
    private static final String DATABASE = "jobq";
    private static final String SUPERUSER = "postgres";
    private static final long COMMAND_TIMEOUT_SECONDS = 120;

    private final Path bin;
    private final Path dir;
    private final Path logDir;
    private final int port;
    private final List<String> asServerUser;
    private final List<String> settings;
    private final Thread shutdownHook = new Thread(this::close, "stop-throwaway-postgres");
    private HikariDataSource pool;
    private boolean closed;

    private ThrowawayPostgres(Path bin, Path dir, Path logDir, int port, List<String> asServerUser, List<String> settings) {
        this.settings = List.copyOf(settings);
        this.bin = bin;
        this.dir = dir;
        this.logDir = logDir;
        this.port = port;
        this.asServerUser = asServerUser;
    }

    /**
     * Creates, starts and migrates a cluster (a few seconds).
     *
     * @param logDir where {@link #close} leaves the server's log and the output of the commands run
     * @throws IllegalStateException if the server programs are missing or a step fails (naming the log)
     */
    public static ThrowawayPostgres start(Path logDir) {
        return start(logDir, List.of());
    }

    /**
     * As {@link #start(Path)}, with server settings of the caller's (e.g. {@code max_connections=40}), each
     * passed to {@code postgres} as {@code -c name=value} at every start.
     */
    public static ThrowawayPostgres start(Path logDir, List<String> settings) {
        Path bin = PostgresServerBinaries.directory();
        removeOrphans(bin);
        List<String> asServerUser = serverUser();
        try {
            Path dir = Files.createTempDirectory(PREFIX);
            Files.writeString(dir.resolve(OWNER_FILE), Long.toString(ProcessHandle.current().pid()));
            if (!asServerUser.isEmpty()) Files.setOwner(dir, principal(SUPERUSER));
            ThrowawayPostgres pg = new ThrowawayPostgres(bin, dir, logDir, freePort(), asServerUser, settings);
            Runtime.getRuntime().addShutdownHook(pg.shutdownHook);
            try {
                pg.serverCommand("initdb", "-D", pg.data(), "-U", SUPERUSER, "--auth=trust", "--encoding=UTF8",
                        "--no-locale", "--no-sync");
                pg.pgCtlStart();
                pg.createAndMigrate();
            } catch (RuntimeException e) {
                pg.close();
                throw e;
            }
            return pg;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The migrated database {@code jobq}, with a small pool; the pool is closed by {@link #close}. */
    public TestDatabase database() {
        return new TestDatabase(DATABASE, testUrl(DATABASE), pool);
    }

    /**
     * {@code pg_ctl restart -m fast}: sessions are disconnected, the server stops after a checkpoint and
     * starts again; returns once it accepts connections (typically about a second later). The test's own
     * pool then drops its connections: HikariCP does not check one used within the last 500 ms before
     * handing it out, so the test's next query could otherwise get a connection the restart killed.
     */
    public void restart() {
        restart("fast");
    }

    /**
     * {@code pg_ctl restart -m <mode>}: {@code fast} as {@link #restart()}; {@code immediate} is a crash (no
     * checkpoint, every backend killed; the server recovers from its WAL at start), as after a power cut.
     */
    public void restart(String mode) {
        serverCommand("pg_ctl", "restart", "-D", data(), "-m", mode, "-w", "-t", "60", "-l", serverLog(),
                "-o", serverOptions());
        if (pool != null) pool.getHikariPoolMXBean().softEvictConnections();
    }

    /** Stops the server ({@code -m fast}); {@link #startServer} brings it back with its data. */
    public void stopServer() {
        serverCommand("pg_ctl", "stop", "-D", data(), "-m", "fast", "-w", "-t", "60");
    }

    /** Starts the server stopped by {@link #stopServer}; returns once it accepts connections. */
    public void startServer() {
        pgCtlStart();
        if (pool != null) pool.getHikariPoolMXBean().softEvictConnections();
    }

    /** The port the server listens on (127.0.0.1 only). */
    public int port() {
        return port;
    }

    /** A JDBC URL of {@code database} on this server, as superuser {@code postgres}. */
    public String jdbcUrl(String database) {
        return "jdbc:postgresql://127.0.0.1:" + port + "/" + database + "?user=" + SUPERUSER;
    }

    @Override
    public synchronized void close() {
        if (closed) return;
        closed = true;
        if (pool != null) pool.close();
        try {
            serverCommand("pg_ctl", "stop", "-D", data(), "-m", "immediate", "-w");
        } catch (RuntimeException e) {
            // not running (start failed, or stopped already): the directory is removed all the same
        }
        try {
            Files.createDirectories(logDir);
            for (String log : List.of("postgres.log", "commands.log")) {
                Path from = dir.resolve(log);
                if (Files.exists(from)) Files.copy(from, logDir.resolve(log), StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException e) {
            System.err.println("ThrowawayPostgres: could not keep the logs of " + dir + ": " + e);
        }
        deleteTree(dir);
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException e) {
            // called from the hook itself, during shutdown
        }
    }

    private void pgCtlStart() {
        serverCommand("pg_ctl", "start", "-D", data(), "-w", "-t", "60", "-l", serverLog(), "-o", serverOptions());
    }

    /** Only 127.0.0.1 and a socket in the cluster's own directory: nothing clashes with another server. */
    private String serverOptions() {
        StringBuilder options = new StringBuilder("-p " + port + " -k " + dir + " -c listen_addresses=127.0.0.1");
        for (String setting : settings) options.append(" -c ").append(setting);
        return options.toString();
    }

    private static int freePort() {
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void createAndMigrate() {
        try (Connection admin = DriverManager.getConnection(jdbcUrl("postgres"));
             Statement st = admin.createStatement()) {
            st.execute("CREATE DATABASE " + DATABASE);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot create database " + DATABASE + " on the throwaway cluster: " + e, e);
        }
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(testUrl(DATABASE));
        config.setMaximumPoolSize(8);
        config.setMinimumIdle(0);
        config.setPoolName("throwaway-" + port);
        config.setConnectionTimeout(10_000);
        pool = new HikariDataSource(config);
        Migrations.migrate(pool);
    }

    /** The URL of the tests' pool: their own SQL names jobq's tables unqualified (jobq's code qualifies its own). */
    private String testUrl(String database) {
        return jdbcUrl(database) + "&currentSchema=jobq,public";
    }

    private String data() {
        return dir.resolve("data").toString();
    }

    private String serverLog() {
        return dir.resolve("postgres.log").toString();
    }

    /** Runs {@code program} from the server's bin directory, as the server's OS user; output to commands.log. */
    private void serverCommand(String program, String... args) {
        List<String> command = new ArrayList<>(asServerUser);
        command.add(bin.resolve(program).toString());
        command.addAll(List.of(args));
        run(command, dir, dir.resolve("commands.log"));
    }

    private static void run(List<String> command, Path workDir, Path log) {
        try {
            Files.writeString(log, "$ " + String.join(" ", command) + "\n", java.nio.file.StandardOpenOption.CREATE,
                    java.nio.file.StandardOpenOption.APPEND);
            // The working directory must be one the server user may enter (not the build's, under /root).
            Process p = new ProcessBuilder(command).directory(workDir.toFile()).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
            if (!p.waitFor(COMMAND_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(String.join(" ", command) + " did not finish within "
                        + COMMAND_TIMEOUT_SECONDS + " s; see " + log);
            }
            if (p.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", command) + " exited " + p.exitValue() + ":\n"
                        + Files.readString(log));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + String.join(" ", command), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Empty when not root; else the prefix that runs a program as {@code postgres}. */
    private static List<String> serverUser() {
        if (new UnixSystem().getUid() != 0) return List.of();
        principal(SUPERUSER); // fails clearly if there is no such user
        return List.of("runuser", "-u", SUPERUSER, "--");
    }

    private static UserPrincipal principal(String name) {
        try {
            return FileSystems.getDefault().getUserPrincipalLookupService().lookupPrincipalByName(name);
        } catch (UserPrincipalNotFoundException e) {
            throw new IllegalStateException("the tests run as root, and initdb and postgres refuse to run as root;"
                    + " they would run as the OS user '" + name + "', which does not exist. Create it (the postgresql"
                    + " package does) or run the tests as an ordinary user.", e);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Stops and deletes clusters of JVMs that died before closing them (SIGKILL skips shutdown hooks). */
    private static void removeOrphans(Path bin) {
        Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
        try (Stream<Path> dirs = Files.list(tmp)) {
            for (Path d : dirs.filter(d -> d.getFileName().toString().startsWith(PREFIX)).toList()) {
                Path owner = d.resolve(OWNER_FILE);
                if (!Files.isRegularFile(owner)) continue;
                long pid = Long.parseLong(Files.readString(owner).strip());
                if (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) continue;
                try {
                    List<String> stop = new ArrayList<>(serverUser());
                    stop.addAll(List.of(bin.resolve("pg_ctl").toString(), "stop", "-D", d.resolve("data").toString(),
                            "-m", "immediate", "-w"));
                    run(stop, d, d.resolve("commands.log"));
                } catch (RuntimeException e) {
                    // not running any more
                }
                deleteTree(d);
            }
        } catch (IOException | NumberFormatException e) {
            System.err.println("ThrowawayPostgres: could not check " + tmp + " for orphaned clusters: " + e);
        }
    }

    private static void deleteTree(Path root) {
        if (!Files.exists(root)) return;
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
        } catch (IOException e) {
            System.err.println("ThrowawayPostgres: could not delete " + root + ": " + e);
        }
    }
}
