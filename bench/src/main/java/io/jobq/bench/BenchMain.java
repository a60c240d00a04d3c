package io.jobq.bench;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.core.ConsoleAppender;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.concurrent.Callable;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code java -jar jobq-bench.jar all [--quick] [--keep] [--database-url URL]}: runs the experiments
 * against a fresh database {@code jobq_bench}, prints one report on stdout (progress on stderr) and
 * writes it, with every run's raw numbers, to {@code bench/results.txt}
 * ({@code bench/results-quick.txt} with {@code --quick}).
 *
 * <p>Exit codes: 0 when every experiment ran and every check held; 1 when an experiment failed or a
 * check did not hold (fair p95 not below FIFO's, a chaos job lost or done twice, a peer that could not
 * run); 2 for usage errors. Never for speed.
 */
@Command(name = "jobq-bench", mixinStandardHelpOptions = true, version = "jobq-bench 0.1.0",
        description = "jobq's benchmarks: the seed's four experiments, the raw-SQL floor, the peers (db-scheduler, JobRunr), enqueue and table growth.",
        subcommands = {BenchMain.All.class, BenchMain.Fairness.class, BenchMain.Throughput.class,
                BenchMain.Latency.class, BenchMain.Chaos.class, BenchMain.Soak.class, BenchMain.Floor.class,
                BenchMain.Peers.class, BenchMain.Enqueue.class, BenchMain.Growth.class, CommandLine.HelpCommand.class})
public final class BenchMain implements Runnable {

    /** The experiments, in the order {@code all} runs them. */
    enum Experiment { FAIRNESS, THROUGHPUT, FLOOR, PEERS, ENQUEUE, GROWTH, LATENCY, CHAOS }

    public static void main(String[] args) {
        System.exit(new CommandLine(new BenchMain()).execute(args));
    }

    @Override
    public void run() {
        new CommandLine(this).usage(System.out);
    }

    /** Flags every subcommand takes. */
    static final class Options {
        @Option(names = "--quick", description = "Shrink every experiment (CI): under 3 minutes on 2 cores.")
        boolean quick;

        @Option(names = "--keep", description = "Keep the jobq_bench database afterwards, for inspection.")
        boolean keep;

        @Option(names = "--database-url", paramLabel = "URL",
                description = "The server to use (its database name is replaced by jobq_bench). "
                        + "Default: env DATABASE_URL, else " + BenchDatabase.DEFAULT_URL + ".")
        String databaseUrl;

        @Option(names = "--output", paramLabel = "FILE",
                description = "Where to write the report with raw runs. Default: bench/results.txt "
                        + "(all), bench/results-quick.txt (all --quick), bench/results-<experiment>[-quick].txt.")
        Path output;

        @Option(names = "--jobq-jar", paramLabel = "FILE",
                description = "The launcher jar for chaos. Default: jobq.jar next to this jar, else bootstrap/target/jobq.jar.")
        Path jobqJar;

        @Option(names = "--throughput-jobs", paramLabel = "N",
                description = "Override the jobs per throughput/floor run (full: 20000, quick: 1000); the report says so.")
        Integer throughputJobs;

        @Option(names = "--runs", paramLabel = "N",
                description = "Override the runs per throughput/floor cell (full: 3, quick: 1); the report says so.")
        Integer runs;

        @Option(names = "--workers", paramLabel = "N", split = ",",
                description = "Override the worker counts of the throughput/floor tables, e.g. 8,16 (full: 1,2,4,8,16; quick: 1,4,16).")
        List<Integer> workers;

        @Option(names = "--throughput-seconds", paramLabel = "S",
                description = "Override the time box of a throughput/floor/deployment run (full and quick: 6); the report says so.")
        Integer throughputSeconds;

        @Option(names = "--seed", paramLabel = "N", defaultValue = "42",
                description = "Seed of the latency arrivals and chaos kills. Default: 42.")
        long seed;
    }

    abstract static class Run implements Callable<Integer> {
        @Mixin Options options = new Options();

        abstract String name();

        abstract Set<Experiment> experiments();

        @Override
        public Integer call() {
            return new BenchMain().execute(name(), experiments(), options);
        }
    }

    @Command(name = "all", mixinStandardHelpOptions = true, description = "Every experiment, one report.")
    static final class All extends Run {
        String name() { return "all"; }
        Set<Experiment> experiments() { return EnumSet.allOf(Experiment.class); }
    }

    @Command(name = "fairness", mixinStandardHelpOptions = true, description = "Noisy neighbour: FIFO vs fair vs capped; long vs short jobs: jobs vs work fairness.")
    static final class Fairness extends Run {
        String name() { return "fairness"; }
        Set<Experiment> experiments() { return EnumSet.of(Experiment.FAIRNESS); }
    }

    @Command(name = "throughput", mixinStandardHelpOptions = true,
            description = "jobs/s of jobq's workers per claim strategy and worker count, each run beside the floor's; the deployment shape.")
    static final class Throughput extends Run {
        String name() { return "throughput"; }
        Set<Experiment> experiments() { return EnumSet.of(Experiment.THROUGHPUT, Experiment.FLOOR); }
    }

    @Command(name = "latency", mixinStandardHelpOptions = true, description = "Pickup latency: LISTEN/NOTIFY vs polling every 1 s, beside a bare JDBC floor.")
    static final class Latency extends Run {
        String name() { return "latency"; }
        Set<Experiment> experiments() { return EnumSet.of(Experiment.LATENCY); }
    }

    @Command(name = "chaos", mixinStandardHelpOptions = true, description = "Crash recovery: worker processes SIGKILLed every second.")
    static final class Chaos extends Run {
        String name() { return "chaos"; }
        Set<Experiment> experiments() { return EnumSet.of(Experiment.CHAOS); }
    }

    @Command(name = "soak", mixinStandardHelpOptions = true, description = "Chaos at ten times the seed on a PostgreSQL cluster of "
            + "its own: kills, a stall, two crash restarts of the server, the API killed mid-enqueue, connections refused.")
    static final class Soak implements Callable<Integer> {
        @Option(names = "--quick", description = "CI's size: 2,000 jobs, 4 workers, 40 s of faults (under 2 minutes).")
        boolean quick;

        @Option(names = "--jobq-jar", paramLabel = "FILE",
                description = "The launcher jar. Default: jobq.jar next to this jar, else bootstrap/target/jobq.jar.")
        Path jobqJar;

        @Option(names = "--seed", paramLabel = "N", defaultValue = "42", description = "Seed of the victims. Default: 42.")
        long seed;

        @Option(names = "--output", paramLabel = "FILE",
                description = "Where to write the report. Default: bench/results-soak.txt, bench/results-soak-quick.txt with --quick.")
        Path output;

        @Override
        public Integer call() {
            quietLogs();
            Options o = new Options();
            o.jobqJar = jobqJar;
            o.quick = quick;
            o.output = output;
            return SoakReport.run(quick ? SoakPlan.QUICK : SoakPlan.FULL, jobqJar(o, benchJar()), seed, outputPath("soak", o));
        }
    }

    @Command(name = "floor", mixinStandardHelpOptions = true, description = "The same SQL from a bare JDBC loop.")
    static final class Floor extends Run {
        String name() { return "floor"; }
        Set<Experiment> experiments() { return EnumSet.of(Experiment.FLOOR); }
    }

    @Command(name = "peers", mixinStandardHelpOptions = true, description = "jobq, db-scheduler and JobRunr drain the same jobs.")
    static final class Peers extends Run {
        String name() { return "peers"; }
        Set<Experiment> experiments() { return EnumSet.of(Experiment.PEERS); }
    }

    @Command(name = "enqueue", mixinStandardHelpOptions = true, description = "Enqueue jobs/s: HTTP, JobClient, beside an INSERT floor.")
    static final class Enqueue extends Run {
        String name() { return "enqueue"; }
        Set<Experiment> experiments() { return EnumSet.of(Experiment.ENQUEUE); }
    }

    @Command(name = "growth", mixinStandardHelpOptions = true, description = "Claim throughput with and without many done rows.")
    static final class Growth extends Run {
        String name() { return "growth"; }
        Set<Experiment> experiments() { return EnumSet.of(Experiment.GROWTH); }
    }

    int execute(String name, Set<Experiment> experiments, Options o) {
        quietLogs();
        Progress progress = new Progress(System.err);
        Plan base = o.quick ? Plan.QUICK : Plan.FULL;
        Plan plan;
        try {
            plan = base.withThroughput(Optional.ofNullable(o.throughputJobs).orElse(base.throughputJobs()),
                    Optional.ofNullable(o.runs).orElse(base.runs()),
                    Optional.ofNullable(o.throughputSeconds).map(Duration::ofSeconds).orElse(base.throughputBox()),
                    Optional.ofNullable(o.workers).orElse(base.workerCounts()));
        } catch (IllegalArgumentException e) {
            System.err.println("jobq-bench: " + e.getMessage() + " (--throughput-jobs, --runs, --throughput-seconds, --workers)");
            return 2;
        }
        String startedAt = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
        String loadAtStart = MachineFacts.loadAverage();
        String serverUrl = Optional.ofNullable(o.databaseUrl).or(() -> Optional.ofNullable(System.getenv("DATABASE_URL")))
                .filter(s -> !s.isBlank()).orElse(BenchDatabase.DEFAULT_URL);
        String command = "java -jar jobq-bench.jar " + name + (o.quick ? " --quick" : "")
                + (o.throughputJobs != null ? " --throughput-jobs " + o.throughputJobs : "")
                + (o.runs != null ? " --runs " + o.runs : "")
                + (o.throughputSeconds != null ? " --throughput-seconds " + o.throughputSeconds : "")
                + (o.workers != null ? " --workers " + o.workers.stream().map(String::valueOf).collect(Collectors.joining(",")) : "");
        Results results = new Results();
        Map<String, String> server;
        String database;
        progress.step("%s: %s run, experiments %s; load average %s", command, o.quick ? "quick" : "full", experiments, loadAtStart);
        try (BenchDatabase db = BenchDatabase.createFresh(serverUrl, o.keep)) {
            database = db.masked();
            server = db.serverFacts();
            progress.step("database %s created fresh and migrated", database);
            for (Experiment e : experiments) {
                try {
                    switch (e) {
                        case FAIRNESS -> {
                            results.fairness = new FairnessExperiment(db, plan, progress).run();
                            results.workShare = new WorkShareExperiment(db, plan, progress).run();
                        }
                        case THROUGHPUT -> {
                            ThroughputExperiment t = new ThroughputExperiment(db, plan, progress);
                            if (experiments.contains(Experiment.FLOOR)) {
                                // Side by side, run after run, so the fractions divide runs made together.
                                Cell.Paired p = t.runBesideFloor(new FloorExperiment(db, plan, progress));
                                results.throughput = p.first();
                                results.floor = p.second();
                            } else {
                                results.throughput = t.run();
                            }
                            results.deployment = t.runDeployment();
                        }
                        case FLOOR -> {
                            if (!experiments.contains(Experiment.THROUGHPUT)) results.floor = new FloorExperiment(db, plan, progress).run();
                        }
                        case PEERS -> results.peers = Optional.of(new PeerExperiment(db, plan, progress).run());
                        case ENQUEUE -> results.enqueue = new EnqueueExperiment(db, plan, progress).run();
                        case GROWTH -> results.growth = Optional.of(new GrowthExperiment(db, plan, progress).run());
                        case LATENCY -> {
                            LatencyExperiment latency = new LatencyExperiment(db, plan, progress, o.seed);
                            results.latency = latency.run(); // kept when only the floor failed: that is reported below
                            latency.floorFailure().ifPresent(f -> {
                                throw new BenchException("the pickup floor failed: " + f.getMessage(), f);
                            });
                        }
                        case CHAOS -> {
                            results.chaos = Optional.of(new ChaosExperiment(db, plan, progress, jobqJar(o, benchJar()), o.seed).run());
                        }
                    }
                } catch (RuntimeException ex) {
                    String what = ex.getMessage() == null ? ex.toString() : ex.getMessage();
                    results.errors.put(e.name().toLowerCase(), what);
                    progress.step("%s FAILED: %s", e.name().toLowerCase(), what);
                    ex.printStackTrace(System.err);
                }
            }
            results.checkpointsRefused = db.checkpointsRefused();
        } catch (Exception e) {
            System.err.println("jobq-bench: cannot prepare database " + BenchDatabase.NAME + ": " + e.getMessage());
            return 1;
        }
        double total = progress.elapsedSeconds();
        String mode = (o.quick ? "quick" : "full") + (plan.equals(base) ? "" : ", throughput resized");
        Report.Header header = new Report.Header(mode, command, startedAt, total,
                MachineFacts.collect(), server, database, loadAtStart, MachineFacts.loadAverage(), plan);
        System.out.print(Report.render(header, results, false));
        System.out.flush();
        write(outputPath(name, o), Report.render(header, results, true), progress);
        List<String> failed = results.failedChecks();
        progress.step("done in %.1f s; %s", total, failed.isEmpty() ? "all checks passed" : failed.size() + " check(s) FAILED");
        return failed.isEmpty() ? 0 : 1;
    }

    static Path outputPath(String name, Options o) {
        if (o.output != null) return o.output;
        String file = "results" + (name.equals("all") ? "" : "-" + name) + (o.quick ? "-quick" : "") + ".txt";
        return Path.of("bench", file);
    }

    /** Writes the file; where its directory is missing (e.g. /app in Docker) falls back to the temp dir. */
    private static void write(Path path, String text, Progress progress) {
        Path target = path;
        Path parent = path.toAbsolutePath().getParent();
        if (parent != null && !Files.isDirectory(parent)) {
            target = Path.of(System.getProperty("java.io.tmpdir"), path.getFileName().toString());
        }
        try {
            Files.writeString(target, text);
            progress.step("wrote %s", target);
        } catch (IOException e) {
            progress.step("could not write %s: %s (the report is on stdout)", target, e.getMessage());
        }
    }

    /** Where this code runs from: jobq-bench.jar (or a classes directory); jobq.jar is looked for next to it. */
    private static Path benchJar() {
        try {
            return Path.of(BenchMain.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException e) {
            throw new BenchException("cannot locate jobq-bench.jar: " + e.getMessage(), e);
        }
    }

    private static Path jobqJar(Options o, Path benchJar) {
        List<Path> candidates = new ArrayList<>();
        if (o.jobqJar != null) candidates.add(o.jobqJar);
        Path dir = benchJar.toAbsolutePath().getParent();
        candidates.add(dir.resolve("jobq.jar")); // Docker: /app/jobq.jar next to /app/jobq-bench.jar
        candidates.add(dir.resolve("../../bootstrap/target/jobq.jar").normalize()); // a source checkout
        for (Path p : candidates) {
            if (Files.isRegularFile(p)) return p;
            if (o.jobqJar != null) break; // an explicit flag that points nowhere is an error, not a hint
        }
        throw new BenchException("jobq.jar not found (tried " + candidates + "); build it or pass --jobq-jar");
    }

    /** jobq's logback config logs INFO to stdout; the report owns stdout, so logs go to stderr, WARN and up. */
    private static void quietLogs() {
        if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext ctx)) return;
        ch.qos.logback.classic.Logger root = ctx.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        root.setLevel(Level.WARN);
        root.iteratorForAppenders().forEachRemaining(a -> {
            if (a instanceof ConsoleAppender<?> console) {
                console.stop();
                console.setTarget("System.err");
                console.start();
            }
        });
    }
}
