package io.jobq.bootstrap.robustness;

import io.jobq.postgres.testing.TestDatabase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The robustness cases' "short settings": lease 2 s (heartbeat every lease/3), maintenance every
 * 0.5 s, fallback poll 30 s (long on purpose, so a broken wake-up path shows). Logs at DEBUG, so
 * each run's start and completion are visible per job.
 */
final class ShortSettings {
    static final Duration LEASE = Duration.ofSeconds(2);
    static final Duration MAINTENANCE = Duration.ofMillis(500);
    /** Start-up of a jobq JVM on a busy machine: generous. */
    static final Duration START_UP = Duration.ofSeconds(120);

    private ShortSettings() {}

    /** A {@code jobq worker} with the short settings, worker id {@code id}, started and ready to claim. */
    static JobqProcess worker(Class<?> testClass, TestDatabase db, String id, String gracePeriod, String... extra) {
        JobqProcess p = workerBuilder(testClass, db, id, id, gracePeriod, extra).start();
        awaitStarted(p, id);
        return p;
    }

    static JobqProcess.Builder workerBuilder(Class<?> testClass, TestDatabase db, String logName, String id,
            String gracePeriod, String... extra) {
        List<String> args = new ArrayList<>(List.of("worker"));
        // extra flags (e.g. "--lease", "10s") replace the short settings' values of the same flag
        List<String> flags = List.of("--lease", "2s", "--maintenance-interval", "500ms", "--poll-interval", "30s",
                "--grace-period", gracePeriod, "--worker-id", id, "--log-level", "DEBUG");
        for (int i = 0; i < flags.size(); i += 2) {
            if (!List.of(extra).contains(flags.get(i))) args.addAll(flags.subList(i, i + 2));
        }
        args.addAll(List.of(extra));
        return JobqProcess.builder(testClass, logName, db.jdbcUrl()).args(args.toArray(String[]::new));
    }

    static void awaitStarted(JobqProcess p, String id) {
        p.awaitLine(START_UP, "worker " + id + " started");
    }
}
