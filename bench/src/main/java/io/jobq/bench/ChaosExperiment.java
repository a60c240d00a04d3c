package io.jobq.bench;

import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.tenant.TenantId;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Experiment 4, crash recovery: {@link Plan#chaosJobs()} jobs, {@link Plan#chaosProcesses()} worker
 * PROCESSES of the real launcher ({@code java -cp jobq.jar:<chaos handler> io.jobq.bootstrap.Main
 * worker --lease 2s …}); every {@link Plan#chaosKillEvery()} one of them, chosen by a seeded random,
 * is killed with SIGKILL and a new one started in its place, until every job is done. A tick at which
 * the last replacement is still starting kills nothing, so at most one worker is down at a time. The short lease
 * lets the survivors' maintenance reap a killed worker's jobs within the run.
 *
 * <p>Checks, all from the database: finished (done), lost (not done at the end; must be 0), jobs
 * re-run after a kill (claimed more than once), side effects recorded more than once, and, from a
 * trigger that logs every UPDATE leaving a job done, jobs recorded done twice (must be 0). Also:
 * no (job, attempt) ran twice, and every done job's completing attempt has its side effect.
 */
final class ChaosExperiment {
    static final QueueName QUEUE = QueueName.of("chaos");
    /** Enough that a job survives being in hand at several kills; the default 5 could turn bad luck into a dead job. */
    static final int MAX_ATTEMPTS = 10;
    static final String LEASE = "2s";
    static final int CONCURRENCY = 4;

    /**
     * @param reRun jobs claimed more than once (recovered from a killed worker and run again)
     * @param effectsTwice jobs whose side effect was recorded more than once (at-least-once, visible)
     * @param doneTwice jobs recorded done more than once (must be 0)
     * @param sameAttemptTwice (job, attempt) pairs whose handler ran twice (must be 0: the fence)
     * @param doneWithoutEffect done jobs whose completing attempt left no side effect (must be 0)
     * @param idleTicks kill ticks at which a replacement was still starting, so none was killed
     * @param seconds from launching the first workers to the last job done (JVM start-up included), by this JVM's clock
     */
    record Result(int jobs, long finished, long dead, long lost, long reRun, long effectsTwice, long doneTwice,
                  long sameAttemptTwice, long doneWithoutEffect, int kills, int idleTicks, double seconds) {
        /** Whether the run kept the guarantees: nothing lost, nothing done twice, fencing held. */
        boolean passed() {
            return lost == 0 && doneTwice == 0 && sameAttemptTwice == 0 && doneWithoutEffect == 0;
        }
    }

    private final BenchDatabase db;
    private final Plan plan;
    private final Progress progress;
    private final Path jobqJar;
    private final long seed;
    private int started;

    ChaosExperiment(BenchDatabase db, Plan plan, Progress progress, Path jobqJar, long seed) {
        this.db = db;
        this.plan = plan;
        this.progress = progress;
        this.jobqJar = jobqJar;
        this.seed = seed;
    }

    Result run() {
        db.reset();
        db.execute("DROP TABLE IF EXISTS bench_effects, bench_done_log");
        db.execute("CREATE TABLE bench_effects (job_id bigint NOT NULL, attempt int NOT NULL, pid bigint NOT NULL, "
                + "at timestamptz NOT NULL DEFAULT clock_timestamp())");
        db.execute("CREATE TABLE bench_done_log (job_id bigint NOT NULL, attempt int NOT NULL, "
                + "at timestamptz NOT NULL DEFAULT clock_timestamp())");
        // Every UPDATE that leaves a row done is logged, including one rewriting an already-done row,
        // so a second completion cannot hide behind the state already being 'done'.
        db.execute("""
                CREATE OR REPLACE FUNCTION bench_log_done() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    INSERT INTO bench_done_log (job_id, attempt) VALUES (NEW.id, NEW.attempts);
                    RETURN NULL;
                END $$""");
        db.execute("CREATE TRIGGER bench_done AFTER UPDATE ON jobs FOR EACH ROW WHEN (NEW.state = 'done') "
                + "EXECUTE FUNCTION bench_log_done()");
        try {
            return runWithTables();
        } finally {
            db.execute("DROP TRIGGER IF EXISTS bench_done ON jobs");
        }
    }

    private Result runWithTables() {
        int n = plan.chaosJobs();
        NoopJobs.enqueue(db, n, TenantId.of("chaos"), QUEUE, TaskName.of(ChaosHandlers.TASK), "{\"ms\": " + plan.chaosJobMs() + "}");
        db.execute("UPDATE jobs SET max_attempts = " + MAX_ATTEMPTS);
        Path log;
        try {
            log = Files.createTempFile("jobq-bench-chaos-", ".log");
        } catch (IOException e) {
            throw new BenchException("cannot create the chaos log file: " + e.getMessage(), e);
        }
        progress.step("chaos: %s jobs of %d ms; %d worker processes (lease %s, concurrency %d), one SIGKILLed every %d ms; logs in %s",
                Format.count(n), plan.chaosJobMs(), plan.chaosProcesses(), LEASE, CONCURRENCY,
                plan.chaosKillEvery().toMillis(), log);
        Random pick = new Random(seed);
        List<LauncherProcess> live = new ArrayList<>();
        int kills = 0;
        int idleTicks = 0;
        long deadline = System.nanoTime() + Duration.ofMinutes(10).toNanos();
        long launched = System.nanoTime();
        try (LauncherProcess.Log sink = new LauncherProcess.Log(log)) {
            Path handlerClasses = LauncherProcess.extractHandlerClasses();
            try {
                for (int i = 0; i < plan.chaosProcesses(); i++) live.add(startWorker(sink, handlerClasses));
                // The kill clock starts once every first worker is up: killing JVMs still starting tests nothing.
                Waits.until(() -> live.stream().allMatch(LauncherProcess::ready), Duration.ofMillis(50), Duration.ofMinutes(2),
                        "the first worker processes to start (see " + log + ")");
                long start = System.nanoTime();
                progress.step("chaos: %d worker processes up; killing one every %d ms", live.size(), plan.chaosKillEvery().toMillis());
                long next = start;
                long done;
                while ((done = doneCount()) < n) {
                    if (System.nanoTime() > deadline) {
                        throw new BenchException("chaos: only " + done + " of " + n + " jobs done after 10 minutes; see " + log);
                    }
                    next += plan.chaosKillEvery().toNanos();
                    Waits.sleepUntil(next);
                    for (LauncherProcess w : live) {
                        if (!w.process().isAlive()) {
                            throw new BenchException("chaos: worker process " + w.name() + " exited by itself with code "
                                    + w.process().exitValue() + "; see " + log);
                        }
                    }
                    if (doneCount() >= n) break;
                    // Kill only while every worker is up. On two loaded cores a JVM takes seconds to
                    // start; killing replacements still starting (or the last one up, tick after tick)
                    // would stall all progress and test nothing. A tick that finds one still starting
                    // kills nothing; such ticks are counted and reported.
                    List<Integer> up = new ArrayList<>();
                    for (int i = 0; i < live.size(); i++) if (live.get(i).ready()) up.add(i);
                    if (up.size() < live.size()) {
                        idleTicks++;
                        continue;
                    }
                    int victim = up.get(pick.nextInt(up.size()));
                    live.get(victim).kill(); // SIGKILL: no shutdown hook, no graceful drain
                    kills++;
                    live.set(victim, startWorker(sink, handlerClasses));
                    if (kills % 5 == 0) {
                        progress.step("chaos: %d kills, %s of %s jobs done", kills, Format.count(doneCount()), Format.count(n));
                    }
                }
            } finally {
                LauncherProcess.stopAll(live);
                LauncherProcess.deleteTree(handlerClasses);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BenchException("interrupted");
        } catch (IOException e) {
            throw new BenchException("chaos: " + e.getMessage(), e);
        }
        double seconds = (System.nanoTime() - launched) / 1e9;
        long finished = doneCount();
        Result r = new Result(n, finished,
                db.queryLong("SELECT count(*) FROM jobs WHERE state = 'dead'"),
                n - finished,
                db.queryLong("SELECT count(*) FROM jobs WHERE attempts > 1"),
                db.queryLong("SELECT count(*) FROM (SELECT job_id FROM bench_effects GROUP BY job_id HAVING count(*) > 1) x"),
                db.queryLong("SELECT count(*) FROM (SELECT job_id FROM bench_done_log GROUP BY job_id HAVING count(*) > 1) x"),
                db.queryLong("SELECT count(*) FROM (SELECT 1 FROM bench_effects GROUP BY job_id, attempt HAVING count(*) > 1) x"),
                db.queryLong("""
                        SELECT count(*) FROM jobs j WHERE j.state = 'done'
                        AND NOT EXISTS (SELECT 1 FROM bench_effects e WHERE e.job_id = j.id AND e.attempt = j.attempts)"""),
                kills, idleTicks, seconds);
        progress.step("chaos: %d kills; %d finished, %d lost, %d re-run, %d done twice", kills, r.finished(), r.lost(),
                r.reRun(), r.doneTwice());
        return r;
    }

    private long doneCount() {
        return db.queryLong("SELECT count(*) FROM jobs WHERE state = 'done'");
    }

    private LauncherProcess startWorker(LauncherProcess.Log log, Path handlerClasses) {
        String name = "chaos-" + (++started);
        return LauncherProcess.start(name, jobqJar, handlerClasses, List.of("worker",
                "--queues", QUEUE.value(), "--concurrency", String.valueOf(CONCURRENCY), "--lease", LEASE,
                "--grace-period", "0s", "--pool-size", "4", "--log-level", "INFO", "--worker-id", name),
                java.util.Map.of("DATABASE_URL", db.jdbcUrl()), log, "worker " + name + " started");
    }
}
