package io.jobq.bench;

import java.io.IOException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * The soak's faults that are not a SIGKILL ({@link LauncherProcess#kill}), and the journal of every fault
 * injected, with its time since the soak's start, for the report.
 */
final class SoakFaults {
    /** One entry of the journal: seconds since the start, what happened. */
    record Entry(double seconds, String what) {}

    private final long startNanos = System.nanoTime();
    private final List<Entry> journal = new CopyOnWriteArrayList<>();
    private final Progress progress;
    private volatile Instant stallEnded;
    private volatile boolean hogRefused;
    private volatile Thread hog;

    SoakFaults(Progress progress) {
        this.progress = progress;
    }

    /** Notes a fault (or a supervisor's action) now. */
    void note(String what) {
        Entry e = new Entry(elapsedSeconds(), what);
        journal.add(e);
        progress.step("soak %6.1f s: %s", e.seconds(), what);
    }

    /** When the stalled worker was sent SIGCONT; null before. */
    Instant stallEnded() {
        return stallEnded;
    }

    /** Whether the hog is still taking, or holding, connections: another fault now would blur what it shows. */
    boolean hogBusy() {
        Thread h = hog;
        return h != null && h.isAlive();
    }

    /** Waits until the hog has let its connections go. */
    void awaitHog() throws InterruptedException {
        Thread h = hog;
        if (h != null) h.join();
    }

    /** Whether the hog saw the server refuse a connection for want of slots (SQLSTATE 53300). */
    boolean hogWasRefused() {
        return hogRefused;
    }

    List<Entry> journal() {
        return List.copyOf(journal);
    }

    double elapsedSeconds() {
        return (System.nanoTime() - startNanos) / 1e9;
    }

    /**
     * SIGSTOP for {@code stall}, then SIGCONT, on a thread of its own: the process neither runs nor answers,
     * so its leases lapse and its jobs are reaped and run elsewhere; when it wakes, its late heartbeats and
     * outcomes must be refused by the fence.
     */
    void stall(LauncherProcess p, Duration stall) {
        signal(p.pid(), "STOP");
        note("SIGSTOP " + p.name() + " for " + stall.toSeconds() + " s (its lease is " + SoakPlan.LEASE.toSeconds() + " s)");
        Thread.ofVirtual().name("soak-stall").start(() -> {
            try {
                Thread.sleep(stall);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                signal(p.pid(), "CONT");
                stallEnded = Instant.now();
                note("SIGCONT " + p.name());
            }
        });
    }

    /**
     * Opens connections to the server until it refuses one (max_connections reached: superuser reserved
     * slots included, as the hog is a superuser), holds them for {@code hold}, then closes them, on a thread
     * of its own. Meanwhile every process that needs a new connection is refused.
     */
    void hog(String jdbcUrl, Duration hold) {
        note("connection hog starts taking every connection the server allows (opening them takes a few seconds)");
        hog = Thread.ofVirtual().name("soak-hog").start(() -> {
            List<Connection> held = new ArrayList<>();
            String refusal = "none";
            try {
                for (int i = 0; i < SoakPlan.MAX_CONNECTIONS + 10; i++) {
                    try {
                        held.add(DriverManager.getConnection(jdbcUrl));
                    } catch (SQLException e) {
                        refusal = e.getSQLState() + " " + e.getMessage();
                        hogRefused = "53300".equals(e.getSQLState());
                        break;
                    }
                }
                note("connection hog holds " + held.size() + " connections for " + hold.toSeconds() + " s; the server now refuses: "
                        + refusal);
                Thread.sleep(hold);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                for (Connection c : held) {
                    try {
                        c.close();
                    } catch (SQLException e) {
                        // closing a connection the server dropped
                    }
                }
                note("connection hog released its connections");
            }
        });
    }

    /** Sends {@code signal} (e.g. STOP, CONT) to {@code pid} with kill(1): the JDK can send only TERM and KILL. */
    static void signal(long pid, String signal) {
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).redirectErrorStream(true).start();
            if (!kill.waitFor(10, TimeUnit.SECONDS)) kill.destroyForcibly();
        } catch (IOException e) {
            throw new BenchException("cannot send SIG" + signal + " to " + pid + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
