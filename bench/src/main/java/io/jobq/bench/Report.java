package io.jobq.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiFunction;

/**
 * Renders the one report: tables shaped like the seed's Results section, the conditions they were
 * measured under, the CI checks, and (for results.txt) every run's raw numbers. Pure: it formats what
 * it is given and measures nothing.
 */
final class Report {
    private Report() {}

    /**
     * What the run was, for the report's head.
     *
     * @param mode "full" or "quick"
     * @param startedAt ISO-8601 UTC
     * @param totalSeconds wall time of the whole invocation, s
     * @param loadAtStart 1-minute load average when the bench started
     * @param loadAtEnd 1-minute load average when it ended
     */
    record Header(String mode, String command, String startedAt, double totalSeconds, Map<String, String> machine,
                  Map<String, String> server, String database, String loadAtStart, String loadAtEnd, Plan plan) {}

    static String render(Header h, Results r, boolean withRaw) {
        StringBuilder out = new StringBuilder();
        out.append(head(h));
        if (r.checkpointsRefused > 0) {
            out.append("CHECKPOINT refused ").append(r.checkpointsRefused).append(" time(s) (the role is neither superuser nor in\n"
                    + "pg_checkpoint): those runs started wherever the server's own checkpoints stood, so a pair's ratio\n"
                    + "may be tilted by one beginning inside one of its runs.\n");
        }
        out.append('\n');
        if (!r.fairness.isEmpty()) out.append(fairness(r.fairness, h.plan())).append('\n');
        if (!r.workShare.isEmpty()) out.append(workShare(r.workShare, h.plan())).append('\n');
        if (!r.throughput.isEmpty()) {
            out.append("Throughput. ").append(Format.count(h.plan().throughputJobs()))
                    .append(" no-op jobs queued, jobs/second, median of ").append(h.plan().runs())
                    .append(" run(s); ").append(h.plan().throughputTiming())
                    .append(";\neach worker its own claim loop and connections").append(warmUps(h.plan())).append(":\n\n")
                    .append(cellTable(r.throughput, h.plan().workerCounts())).append('\n');
        }
        if (!r.floor.isEmpty()) {
            out.append("Floor. The same claim and complete statements from a bare JDBC loop per worker (one connection,\n"
                    + "no runtime, no handler dispatch), same jobs and timing, jobs/second, median of ").append(h.plan().runs())
                    .append(" run(s)").append(r.throughput.isEmpty() ? warmUps(h.plan()) : "").append(":\n\n")
                    .append(cellTable(r.floor, h.plan().workerCounts())).append('\n');
        }
        if (!r.throughput.isEmpty() && !r.floor.isEmpty()) {
            out.append("jobq's throughput as a fraction of the floor (median of the runs' ratios, each run divided by the\n"
                    + "floor's run made beside it; which of a pair ran first alternates):\n\n")
                    .append(fractionTable(r.throughput, r.floor, h.plan().workerCounts())).append('\n');
        }
        if (!r.deployment.isEmpty()) out.append(PeerReport.deployment(r.deployment, r.throughput, h.plan())).append('\n');
        r.peers.ifPresent(o -> out.append(PeerReport.peers(o, h.plan())).append('\n'));
        if (!r.enqueue.isEmpty()) out.append(PeerReport.enqueue(r.enqueue, h.plan())).append('\n');
        r.growth.ifPresent(g -> out.append(PeerReport.growth(g, h.plan())).append('\n'));
        if (!r.latency.isEmpty()) out.append(latency(r.latency, h.plan())).append('\n');
        r.chaos.ifPresent(c -> out.append(chaos(c, h.plan())).append('\n'));
        out.append(checks(r));
        if (withRaw) out.append('\n').append(raw(r));
        return out.toString();
    }

    static String head(Header h) {
        StringBuilder out = new StringBuilder();
        out.append("jobq benchmarks (").append(h.mode()).append(" run): ").append(h.command()).append('\n');
        out.append("date: ").append(h.startedAt()).append("; total run time: ").append(Format.seconds(h.totalSeconds()))
                .append(String.format(java.util.Locale.ROOT, " (%.1f min)", h.totalSeconds() / 60)).append('\n');
        h.machine().forEach((k, v) -> out.append(k).append(": ").append(v).append('\n'));
        out.append("load average (1 min): ").append(h.loadAtStart()).append(" at start, ").append(h.loadAtEnd())
                .append(" at end\n");
        out.append("PostgreSQL: ").append(h.server().getOrDefault("version", "?")).append('\n');
        List<String> settings = new ArrayList<>();
        h.server().forEach((k, v) -> {
            if (!k.equals("version")) settings.add(k + "=" + v);
        });
        out.append("  settings: ").append(String.join(", ", settings)).append('\n');
        out.append("database: ").append(h.database()).append(" (created fresh for this run)\n");
        out.append("percentiles: ").append(Percentiles.METHOD).append(". Waits use the database clock (now() of the\n"
                + "enqueue and claim transactions); latencies and rates use the bench JVM's monotonic clock.\n");
        return out.toString();
    }

    static String fairness(List<FairnessExperiment.Result> results, Plan p) {
        StringBuilder out = new StringBuilder();
        out.append("Noisy neighbour. One tenant enqueues ").append(Format.count(p.fairBigJobs()))
                .append(" jobs at once. Meanwhile, ").append(p.fairSmallTenants())
                .append(" small tenants submit a job every ").append(p.fairSmallEvery().toMillis())
                .append(" ms between them.\n").append(p.fairWorkers()).append(" single-slot workers, ")
                .append(p.fairJobMs()).append(" ms per job. How long do the small tenants' jobs wait before they start?\n\n");
        TextTable t = new TextTable("claim ordering", "small tenants: p50", "p95", "max", "small jobs", "big backlog cleared",
                "big running at most");
        for (FairnessExperiment.Result r : results) {
            t.row(r.label(), Format.millis(r.smallWaitMs().p50()), Format.millis(r.smallWaitMs().p95()),
                    Format.millis(r.smallWaitMs().max()), Format.count(r.smallWaitMs().count()),
                    Format.seconds(r.backlogClearSeconds()), Long.toString(r.bigMostRunning()));
        }
        return out.append(t.render()).toString();
    }

    static String workShare(List<WorkShareExperiment.Result> results, Plan p) {
        StringBuilder out = new StringBuilder();
        out.append("Long vs short jobs. Tenant long's jobs take ").append(WorkShareExperiment.LONG_MS).append(" ms, tenant short's ")
                .append(WorkShareExperiment.SHORT_MS).append(" ms; both backlogged; one worker with ").append(WorkShareExperiment.SLOTS)
                .append(" slots. Worker time each got over ").append(Format.seconds(p.workShareMeasured().toMillis() / 1000.0))
                .append(", after a ").append(Format.seconds(WorkShareExperiment.WARM_UP.toMillis() / 1000.0))
                .append(" warm-up (the handlers' own clocks):\n\n");
        TextTable t = new TextTable("queue fairness", "long: worker time", "short: worker time", "long : short", "long jobs", "short jobs");
        for (WorkShareExperiment.Result r : results) {
            t.row(r.fairness().wireName(), Format.millis(r.longMs()), Format.millis(r.shortMs()),
                    String.format(java.util.Locale.ROOT, "%.2f : 1", r.ratio()), Format.count(r.longJobs()), Format.count(r.shortJobs()));
        }
        return out.append(t.render()).toString();
    }

    /** What came before the throughput and floor cells, uncounted: see {@link Plan#throughputWarmUps()}. */
    static String warmUps(Plan plan) {
        if (plan.throughputWarmUps() == 0) return "; no warm-up";
        return "; after " + plan.throughputWarmUps() + " warm-up round(s) of every strategy at " + plan.warmUpWorkers()
                + " workers, not counted (JIT)";
    }

    static String cellTable(List<Cell> cells, List<Integer> counts) {
        return strategyTable(counts, (s, w) -> find(cells, s, w).map(c -> Format.rate(c.jobsPerSecond())));
    }

    static String fractionTable(List<Cell> ours, List<Cell> floor, List<Integer> counts) {
        return strategyTable(counts, (s, w) -> {
            Optional<Cell> a = find(ours, s, w);
            Optional<Cell> b = find(floor, s, w);
            if (a.isEmpty() || b.isEmpty()) return Optional.empty();
            double f = Cell.fraction(a.get(), b.get());
            return Double.isFinite(f) ? Optional.of(Format.percent(f)) : Optional.empty();
        });
    }

    /**
     * A row per claim strategy, a column per worker count; {@code cell} gives a cell's text, or empty for
     * "-". A strategy with no cell at all has no row.
     */
    private static String strategyTable(List<Integer> counts, BiFunction<ClaimStrategy, Integer, Optional<String>> cell) {
        List<String> head = new ArrayList<>();
        head.add("claim strategy");
        for (int i = 0; i < counts.size(); i++) head.add(i == 0 ? counts.get(i) + (counts.get(i) == 1 ? " worker" : " workers") : String.valueOf(counts.get(i)));
        TextTable t = new TextTable(head.toArray(String[]::new));
        for (ClaimStrategy s : ClaimStrategy.values()) {
            List<String> row = new ArrayList<>();
            row.add(s.label);
            boolean any = false;
            for (int w : counts) {
                Optional<String> c = cell.apply(s, w);
                any |= c.isPresent();
                row.add(c.orElse("-"));
            }
            if (any) t.row(row.toArray(String[]::new));
        }
        return t.render();
    }

    static String latency(List<LatencyExperiment.Result> results, Plan p) {
        StringBuilder out = new StringBuilder();
        out.append("Pickup latency. One idle worker, ").append(p.latencyJobs()).append(" jobs arriving ")
                .append(Format.count(p.latencyGapMinMs())).append("-").append(Format.count(p.latencyGapMaxMs()))
                .append(" ms apart (seeded), time from enqueue to start,\nafter ")
                .append(Format.count(LatencyExperiment.WARM_UP)).append(" warm-up jobs (JIT):\n\n");
        TextTable t = new TextTable("wake-up mechanism", "p50", "p95", "max");
        for (LatencyExperiment.Result r : results) {
            t.row(r.mechanism(), Format.millis(r.latencyMs().p50()), Format.millis(r.latencyMs().p95()),
                    Format.millis(r.latencyMs().max()));
        }
        out.append(t.render());
        Optional<LatencyExperiment.Result> listen = byMechanism(results, LatencyExperiment.LISTEN);
        Optional<LatencyExperiment.Result> floor = byMechanism(results, PickupFloor.MECHANISM);
        if (listen.isPresent() && floor.isPresent()) {
            Percentiles j = listen.get().latencyMs();
            Percentiles f = floor.get().latencyMs();
            out.append(String.format(Locale.ROOT, "\nLISTEN/NOTIFY over the floor (its sample ends at the claimed row), run right after it with the\n"
                    + "same arrivals: p50 %+.1f ms (%s), p95 %+.1f ms (%s). The floor is what this machine's database\n"
                    + "and driver take; with %d samples each, and the machine moving between two runs, read these\n"
                    + "to within about a millisecond.\n",
                    j.p50() - f.p50(), Format.ratio(j.p50() / f.p50()), j.p95() - f.p95(), Format.ratio(j.p95() / f.p95()),
                    Math.min(j.count(), f.count())));
        }
        return out.toString();
    }

    private static Optional<LatencyExperiment.Result> byMechanism(List<LatencyExperiment.Result> results, String mechanism) {
        return results.stream().filter(r -> r.mechanism().equals(mechanism)).findFirst();
    }

    static String chaos(ChaosExperiment.Result c, Plan p) {
        return "Crash recovery. " + Format.count(c.jobs()) + " jobs, " + p.chaosProcesses()
                + " worker processes (the real launcher, lease " + ChaosExperiment.LEASE + "), and one killed with SIGKILL every "
                + Format.millis(p.chaosKillEvery().toMillis()) + " (" + c.kills() + " kills" + (c.idleTicks() > 0
                        ? "; " + c.idleTicks() + " tick(s) skipped while a replacement was starting" : "") + ") and replaced.\n"
                + Format.count(c.finished()) + " of " + Format.count(c.jobs()) + " jobs finished in " + Format.seconds(c.seconds())
                + "; " + c.lost() + " lost; " + c.reRun() + " recovered from a killed worker and re-run ("
                + c.effectsTwice() + " ran their side effect more than once, as at-least-once allows);\n"
                + c.doneTwice() + " recorded done twice; " + c.sameAttemptTwice() + " (job, attempt) runs duplicated; "
                + c.doneWithoutEffect() + " done without their side effect; " + c.dead() + " dead.\n";
    }

    static String checks(Results r) {
        List<String> failed = r.failedChecks();
        if (failed.isEmpty()) return "Checks: passed (fair p95 below FIFO's; the capped flood never above its cap; no chaos job lost or done twice;"
                + " no experiment failed).\n";
        StringBuilder out = new StringBuilder("Checks: FAILED\n");
        for (String f : failed) out.append("  - ").append(f).append('\n');
        return out.toString();
    }

    static String raw(Results r) {
        StringBuilder out = new StringBuilder("Raw runs (jobs/s of every run, in order; mean jobs returned per claim):\n");
        for (Cell c : r.throughput) out.append(rawLine("jobq ", c));
        for (Cell c : r.floor) out.append(rawLine("floor", c));
        for (FairnessExperiment.Result f : r.fairness) {
            out.append(String.format(java.util.Locale.ROOT, "fairness %s: small jobs %d, wait ms min %.1f p50 %.1f p95 %.1f max %.1f;"
                    + " backlog %.2f s; big running at most %d%n",
                    f.label(), f.smallWaitMs().count(), f.smallWaitMs().min(), f.smallWaitMs().p50(), f.smallWaitMs().p95(),
                    f.smallWaitMs().max(), f.backlogClearSeconds(), f.bigMostRunning()));
        }
        for (LatencyExperiment.Result l : r.latency) {
            out.append(String.format(java.util.Locale.ROOT, "latency %s: n %d, ms min %.2f p50 %.2f p95 %.2f max %.2f%n",
                    l.mechanism(), l.latencyMs().count(), l.latencyMs().min(), l.latencyMs().p50(), l.latencyMs().p95(), l.latencyMs().max()));
        }
        r.chaos.ifPresent(c -> out.append("chaos: ").append(c).append('\n'));
        out.append(PeerReport.raw(r));
        return out.toString();
    }

    private static String rawLine(String who, Cell c) {
        List<String> rates = c.runsJobsPerSecond().stream().map(Format::rate).toList();
        return String.format(java.util.Locale.ROOT, "%s %-31s %2d worker(s): %s jobs/s -> median %s; %.2f jobs per claim%n",
                who, c.strategy().label, c.workers(), String.join(", ", rates), Format.rate(c.jobsPerSecond()), c.meanJobsPerClaim());
    }

    private static Optional<Cell> find(List<Cell> cells, ClaimStrategy s, int workers) {
        return cells.stream().filter(c -> c.strategy() == s && c.workers() == workers).findFirst();
    }
}
