package io.jobq.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Locale;

/** Runs a soak and reports it: the plan, every fault with its time, the figures and their checks; exit 0 only if all held. */
final class SoakReport {
    private SoakReport() {}

    static int run(SoakPlan plan, Path jobqJar, long seed, Path output) {
        Progress progress = new Progress(System.err);
        String startedAt = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
        Path logDir;
        SoakExperiment.Result result;
        try {
            logDir = Files.createTempDirectory("jobq-bench-soak-");
            progress.step("soak (%s): %s jobs, %d workers, %d s of faults; logs in %s", plan.mode(), Format.count(plan.jobs()),
                    plan.workers(), plan.faults().toSeconds(), logDir);
            result = new SoakExperiment(plan, progress, jobqJar, seed, logDir).run();
        } catch (IOException | java.sql.SQLException | RuntimeException e) {
            System.err.println("jobq-bench soak: FAILED: " + e);
            e.printStackTrace(System.err);
            return 1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 1;
        }
        String text = render(plan, result, startedAt, seed, logDir);
        System.out.print(text);
        try {
            Files.writeString(output, text);
            progress.step("wrote %s", output);
        } catch (IOException e) {
            progress.step("could not write %s: %s (the report is on stdout)", output, e.getMessage());
        }
        return result.passed() ? 0 : 1;
    }

    static String render(SoakPlan plan, SoakExperiment.Result r, String startedAt, long seed, Path logDir) {
        StringBuilder out = new StringBuilder();
        out.append("jobq chaos soak (").append(plan.mode()).append("), started ").append(startedAt).append(", seed ").append(seed)
                .append(", ").append(String.format(Locale.ROOT, "%.0f s in all", r.seconds())).append('\n');
        out.append(String.format(Locale.ROOT, "%s jobs (4 %% slow %d ms past a %d s lease, 8 %% failing twice, 3 %% failing permanently, "
                        + "the rest %d ms) enqueued through HTTP by %d clients; %d worker processes x %d slots (every second"
                        + " one started with --prefetch %d); %d s of faults; "
                        + "a throwaway PostgreSQL (max_connections %d); logs in %s%n",
                Format.count(plan.jobs()), SoakPlan.SLOW.toMillis(), SoakPlan.LEASE.toSeconds(), SoakPlan.FAST_MS, plan.clients(),
                plan.workers(), SoakPlan.CONCURRENCY, SoakPlan.PREFETCH, plan.faults().toSeconds(), SoakPlan.MAX_CONNECTIONS, logDir));
        out.append("\nFaults, in seconds since the soak started (a SIGKILL of a random worker every second besides):\n");
        for (SoakFaults.Entry e : r.faults()) out.append(String.format(Locale.ROOT, "  %7.1f  %s%n", e.seconds(), e.what()));
        out.append("\nFigures:\n").append(r.checks().render()).append('\n');
        out.append(String.format(Locale.ROOT, "  %-62s %8s%n", "requests clients sent again (API down, 5xx, cut)", Format.count(r.resent())));
        out.append(String.format(Locale.ROOT, "  %-62s %8s%n", "late writes of the stalled worker refused (its log)",
                Format.count(r.lateWritesRefused())));
        out.append(String.format(Locale.ROOT, "  %-62s %8.1f s%n", "drain: from the end of the faults to every job done or dead", r.drainSeconds()));
        for (String refused : r.refused()) out.append("  REFUSED by the API: ").append(refused).append('\n');
        for (String missing : r.faultsMissing()) out.append("  FAULT MISSING: ").append(missing).append('\n');
        out.append(r.passed() ? "\nAll checks held.\n" : "\nSOME CHECKS FAILED.\n");
        return out.toString();
    }
}
