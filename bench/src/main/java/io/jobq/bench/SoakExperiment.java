package io.jobq.bench;

import io.jobq.postgres.testing.ThrowawayPostgres;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Chaos at ten times the seed ({@code jobq-bench soak}): on a PostgreSQL cluster of its own (initdb in a temp
 * directory, a free port; never the shared server), {@link SoakPlan#workers()} real {@code worker} processes and
 * one {@code api} process, while {@link SoakEnqueuer} clients enqueue {@link SoakPlan#jobs()} jobs of four kinds
 * through HTTP and these faults run (each noted with its time, {@link SoakFaults}):
 * <ul>
 *   <li>every second a random worker that is up is SIGKILLed and replaced, if another is up too (a tick at which
 *       the others are JVMs still starting kills none, and says so; the stalled one is spared);</li>
 *   <li>at 15 % (or the first tick after with two workers up): the worker holding the most running jobs
 *       SIGSTOPped past its lease, then SIGCONTed (its late writes must be refused);</li>
 *   <li>at 30 % and 80 %: PostgreSQL restarted in immediate mode (a crash: no checkpoint, recovery from WAL); the
 *       second waits for the hog to let go (after the fault window if it must), so the two never blur;</li>
 *   <li>at 45 %, mid-enqueue: the API process SIGKILLed and started again (clients send again, same keys);</li>
 *   <li>at 55 %: a hog holds every connection the server allows for {@link SoakPlan#HOG}.</li>
 * </ul>
 * Processes that exit by themselves are replaced, as a supervisor would, and noted. After the faults, every job
 * must finish within {@link SoakPlan#drainLimit()}; then {@link SoakChecks} runs. A planned fault that did not
 * happen fails the run too.
 */
final class SoakExperiment {
    static final String QUEUE = "soak";

    /**
     * @param faultsMissing planned faults that did not happen (must be none)
     * @param drainSeconds from the end of the faults to every job done or dead
     * @param lateWritesRefused lines of the stalled worker's log, after it woke, saying a write of its was refused
     */
    record Result(SoakPlan plan, List<SoakFaults.Entry> faults, List<String> faultsMissing, SoakChecks checks, long resent,
                  List<String> refused, double drainSeconds, int kills, long lateWritesRefused, double seconds) {
        boolean passed() {
            return checks.passed() && refused.isEmpty() && faultsMissing.isEmpty();
        }
    }

    private final SoakPlan plan;
    private final Progress progress;
    private final Path jobqJar;
    private final Random random;
    private final Path logDir;
    private final SoakFaults faults;
    // one run's processes and what it did to them
    private final List<LauncherProcess> workers = new ArrayList<>();
    private LauncherProcess api;
    private ThrowawayPostgres pg;
    private LauncherProcess.Log log;
    private Path handlers;
    private String url;
    private int apiPort;
    private int started;
    private int kills;
    private int idleTicks;
    private int restarts;
    private boolean apiKilled;
    private boolean hogged;
    private LauncherProcess stalled;
    private long stallEndsNanos;

    SoakExperiment(SoakPlan plan, Progress progress, Path jobqJar, long seed, Path logDir) {
        this.plan = plan;
        this.progress = progress;
        this.jobqJar = jobqJar;
        this.random = new Random(seed);
        this.logDir = logDir;
        this.faults = new SoakFaults(progress);
    }

    Result run() throws IOException, SQLException, InterruptedException {
        Files.createDirectories(logDir);
        try (ThrowawayPostgres cluster = ThrowawayPostgres.start(logDir, List.of("max_connections=" + SoakPlan.MAX_CONNECTIONS));
             LauncherProcess.Log processLog = new LauncherProcess.Log(logDir.resolve("processes.log"))) {
            pg = cluster;
            log = processLog;
            prepareLedger();
            url = pg.jdbcUrl("jobq");
            apiPort = freePort();
            handlers = LauncherProcess.extractHandlerClasses();
            faults.note("cluster up on port " + pg.port() + "; processes log to " + log.file());
            try {
                api = startApi();
                for (int i = 0; i < plan.workers(); i++) workers.add(startWorker());
                Waits.until(() -> api.ready() && workers.stream().allMatch(LauncherProcess::ready), Duration.ofMillis(50),
                        Duration.ofMinutes(2), "the processes to start (see " + log.file() + ")");
                SoakEnqueuer clients = new SoakEnqueuer(plan, apiPort);
                Duration window = Duration.ofMillis((long) (plan.faults().toMillis() * SoakPlan.ENQUEUE_SHARE));
                faults.note("enqueueing " + Format.count(plan.jobs()) + " jobs over " + window.toSeconds() + " s through HTTP; "
                        + plan.workers() + " workers up");
                List<Thread> clientThreads = clients.start(window);
                inject();
                double faultsEnd = faults.elapsedSeconds();
                long clientsDeadline = System.nanoTime() + plan.drainLimit().toNanos();
                for (Thread t : clientThreads) t.join(Math.max(1, (clientsDeadline - System.nanoTime()) / 1_000_000));
                clientThreads.forEach(Thread::interrupt); // any still sending: the run fails on what it did not enqueue
                faults.note("faults over; " + Format.count(clients.acknowledged.size()) + " jobs acknowledged; draining");
                double drained = drain(clients.acknowledged.size());
                SoakChecks checks = SoakChecks.run(pg.database().dataSource(), clients.acknowledged);
                log.flush();
                return new Result(plan, faults.journal(), faultsMissing(), checks, clients.resent.get(), clients.refused,
                        drained - faultsEnd, kills, lateWritesRefused(), faults.elapsedSeconds());
            } finally {
                List<LauncherProcess> all = new ArrayList<>(workers);
                if (api != null) all.add(api);
                for (LauncherProcess p : all) SoakFaults.signal(p.pid(), "CONT"); // none left stopped
                LauncherProcess.stopAll(all);
                LauncherProcess.deleteTree(handlers);
            }
        }
    }

    /** The fault loop: one tick a second for {@link SoakPlan#faults()}. */
    private void inject() throws InterruptedException {
        long start = System.nanoTime();
        long end = start + plan.faults().toNanos();
        for (long tick = start + 1_000_000_000L; tick < end; tick += 1_000_000_000L) {
            Waits.sleepUntil(tick);
            double at = (double) (tick - start) / plan.faults().toNanos();
            supervise();
            LauncherProcess busiest;
            if (stalled == null && at >= 0.15 && (busiest = busiest()) != null) {
                stalled = busiest;
                stallEndsNanos = System.nanoTime() + SoakPlan.STALL.toNanos() + 2_000_000_000L;
                faults.stall(stalled, SoakPlan.STALL);
            } else if (restarts == 0 && at >= 0.30 || restarts == 1 && at >= 0.80 && !faults.hogBusy()) {
                restart();
            } else if (!apiKilled && at >= 0.45) {
                apiKilled = true;
                api.kill();
                faults.note("SIGKILL the API process " + api.name() + " mid-enqueue; starting another on the same port");
                api = startApi();
            } else if (!hogged && at >= 0.55) {
                hogged = true;
                faults.hog(url, SoakPlan.HOG);
            }
            killOne();
        }
        if (restarts < 2) { // the hog took long on a loaded machine: the second crash comes after it, not on top
            faults.awaitHog();
            restart();
        }
        faults.note(kills + " workers SIGKILLed and replaced; " + idleTicks + " of the once-a-second ticks killed none,"
                + " fewer than two workers being up (the others still starting)");
    }

    /** {@code pg_ctl restart -m immediate}: a crash of the server, recovered from its WAL. */
    private void restart() {
        restarts++;
        faults.note("PostgreSQL restart -m immediate (" + restarts + " of 2)");
        pg.restart("immediate");
        faults.note("PostgreSQL accepts connections again");
    }

    /**
     * SIGKILLs a random worker that is up, and only while another is up too: killing the last one up, or JVMs still
     * starting (a few seconds each on two loaded cores), would keep every worker starting and test nothing.
     */
    private void killOne() throws InterruptedException {
        LauncherProcess spared = System.nanoTime() < stallEndsNanos ? stalled : null;
        List<Integer> victims = new ArrayList<>();
        for (int i = 0; i < workers.size(); i++) if (workers.get(i).ready() && workers.get(i) != spared) victims.add(i);
        if (victims.size() < 2) {
            idleTicks++;
            return;
        }
        int victim = victims.get(random.nextInt(victims.size()));
        workers.get(victim).kill();
        kills++;
        workers.set(victim, startWorker());
    }

    /** Replaces a process that exited by itself, as a supervisor restarting on a non-zero exit would. */
    private void supervise() {
        for (int i = 0; i < workers.size(); i++) {
            LauncherProcess w = workers.get(i);
            if (!w.process().isAlive()) {
                faults.note(w.name() + " exited by itself with code " + w.process().exitValue() + "; replaced");
                workers.set(i, startWorker());
            }
        }
        if (!api.process().isAlive()) {
            faults.note(api.name() + " exited by itself with code " + api.process().exitValue() + "; replaced");
            api = startApi();
        }
    }

    /**
     * The worker that is up and holds the most running jobs, so that the stall leaves late writes to refuse;
     * null unless another is up too, to reap its jobs meanwhile (the stall waits for such a tick).
     */
    private LauncherProcess busiest() {
        if (workers.stream().filter(LauncherProcess::ready).count() < 2) return null;
        Map<String, Long> running = new HashMap<>();
        try (Connection c = pg.database().dataSource().getConnection(); Statement st = c.createStatement();
             var rs = st.executeQuery("SELECT locked_by, count(*) FROM jobq.jobs WHERE state = 'running' GROUP BY 1")) {
            while (rs.next()) running.put(rs.getString(1), rs.getLong(2));
        } catch (SQLException e) {
            // the server may be restarting: choose by readiness alone
        }
        return workers.stream().filter(LauncherProcess::ready)
                .max(java.util.Comparator.comparingLong(w -> running.getOrDefault(w.name(), 0L))).orElse(null);
    }

    /** The planned faults that did not happen: a run that skipped one proved nothing about it. */
    private List<String> faultsMissing() {
        List<String> missing = new ArrayList<>();
        if (stalled == null) missing.add("no worker was stalled (never two up at once after 15 %)");
        if (restarts < 2) missing.add("PostgreSQL was restarted " + restarts + " times, not 2");
        if (!apiKilled) missing.add("the API process was not killed");
        if (!faults.hogWasRefused()) missing.add("the connection hog never saw the server refuse a connection (53300)");
        return missing;
    }

    /** Waits until every job is done or dead; returns when (seconds since the soak started), or gives up at the limit. */
    private double drain(long accepted) throws SQLException, InterruptedException {
        long deadline = System.nanoTime() + plan.drainLimit().toNanos();
        while (System.nanoTime() < deadline) {
            try (Connection c = pg.database().dataSource().getConnection(); Statement st = c.createStatement();
                 var rs = st.executeQuery("SELECT count(*) FILTER (WHERE state NOT IN ('done', 'dead')), count(*) FROM jobq.jobs")) {
                rs.next();
                if (rs.getLong(1) == 0 && rs.getLong(2) >= accepted) {
                    faults.note("drained: every job done or dead");
                    return faults.elapsedSeconds();
                }
            }
            Thread.sleep(200);
        }
        faults.note("drain limit of " + plan.drainLimit().toSeconds() + " s reached with jobs unfinished");
        return faults.elapsedSeconds();
    }

    /** The stalled worker's refused late writes: its log lines stamped after its SIGCONT that say so. */
    private long lateWritesRefused() throws IOException {
        Instant woke = faults.stallEnded();
        if (stalled == null || woke == null) return 0;
        String prefix = stalled.name() + " | ";
        try (var lines = Files.lines(log.file())) {
            return lines.filter(l -> l.startsWith(prefix))
                    .filter(l -> l.contains("the store refused its") || l.contains("lost its lease"))
                    .filter(l -> stampedAfter(l.substring(prefix.length()), woke)).count();
        }
    }

    private static boolean stampedAfter(String line, Instant instant) {
        int space = line.indexOf(' ');
        try {
            return space > 0 && !Instant.parse(line.substring(0, space)).isBefore(instant);
        } catch (java.time.format.DateTimeParseException e) {
            return false;
        }
    }

    /** The side-effect ledger and the log of every UPDATE leaving a job done (a second completion cannot hide). */
    private void prepareLedger() throws SQLException {
        try (Connection c = pg.database().dataSource().getConnection(); Statement st = c.createStatement()) {
            st.execute("CREATE TABLE public.bench_effects (job_id bigint NOT NULL, attempt int NOT NULL, pid bigint NOT NULL, "
                    + "at timestamptz NOT NULL DEFAULT clock_timestamp())");
            st.execute("CREATE TABLE public.bench_done_log (job_id bigint NOT NULL, attempt int NOT NULL, "
                    + "at timestamptz NOT NULL DEFAULT clock_timestamp())");
            st.execute("""
                    CREATE FUNCTION public.bench_log_done() RETURNS trigger LANGUAGE plpgsql AS $$
                    BEGIN
                        INSERT INTO public.bench_done_log (job_id, attempt) VALUES (NEW.id, NEW.attempts);
                        RETURN NULL;
                    END $$""");
            st.execute("CREATE TRIGGER bench_done AFTER UPDATE ON jobq.jobs FOR EACH ROW WHEN (NEW.state = 'done') "
                    + "EXECUTE FUNCTION public.bench_log_done()");
        }
    }

    private LauncherProcess startWorker() {
        String name = "worker-" + (++started);
        String prefetch = started % 2 == 0 ? String.valueOf(SoakPlan.PREFETCH) : "0";
        return LauncherProcess.start(name, jobqJar, handlers, List.of("worker", "--queues", QUEUE,
                "--concurrency", String.valueOf(SoakPlan.CONCURRENCY), "--prefetch", prefetch,
                "--lease", SoakPlan.LEASE.toSeconds() + "s", "--grace-period", "0s", "--pool-size", "4", "--worker-id", name),
                Map.of("DATABASE_URL", url), log, "worker " + name + " started");
    }

    private LauncherProcess startApi() {
        return LauncherProcess.start("api-" + (++started), jobqJar, handlers, List.of("api", "--port", Integer.toString(apiPort),
                "--pool-size", "8"), Map.of("DATABASE_URL", url), log, "HTTP API listening on");
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
