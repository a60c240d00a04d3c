package io.jobq.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The report's sections for the deployment shape, the peers, enqueue and table growth; {@link Report}
 * puts them in place. Pure, as Report: it formats what it is given.
 */
final class PeerReport {
    private PeerReport() {}

    static String deployment(List<DeploymentCell> one, List<Cell> throughput, Plan p) {
        TextTable t = new TextTable(head("deployment shape", p.concurrencies(), " slot", " slots"));
        List<String> single = new ArrayList<>(List.of("c single-slot workers, SKIP LOCKED"));
        for (int c : p.concurrencies()) {
            single.add(throughput.stream().filter(x -> x.strategy() == ClaimStrategy.SKIP_LOCKED && x.workers() == c).findFirst()
                    .map(x -> Format.rate(x.jobsPerSecond())).orElse("-"));
        }
        t.row(single.toArray(String[]::new));
        for (String shape : one.stream().map(DeploymentCell::shape).distinct().toList()) {
            List<String> rates = new ArrayList<>(List.of(shape));
            List<String> perClaim = new ArrayList<>(List.of("  jobs per claim"));
            for (int c : p.concurrencies()) {
                Optional<DeploymentCell> d = one.stream().filter(x -> x.concurrency() == c && x.shape().equals(shape)).findFirst();
                rates.add(d.map(x -> Format.rate(x.jobsPerSecond())).orElse("-"));
                perClaim.add(d.map(x -> String.format(Locale.ROOT, "%.2f", x.meanJobsPerClaim())).orElse("-"));
            }
            t.row(rates.toArray(String[]::new)).row(perClaim.toArray(String[]::new));
        }
        return "Deployment shape. The same " + Format.count(p.throughputJobs()) + " jobs and timing, jobs/second, median of " + p.runs()
                + " run(s): c workers of one slot each (as above),\nand ONE worker with c slots, as `jobq worker --concurrency c` runs\n("
                + OneWorker.describeShape() + "):\n\n"
                + t.render();
    }

    static String peers(PeerExperiment.Outcome o, Plan p) {
        List<String> systems = o.results().stream().map(PeerExperiment.Result::system).distinct().toList();
        TextTable rates = new TextTable(head("system", p.concurrencies(), " slot", " slots"));
        for (String s : systems) {
            List<String> row = new ArrayList<>(List.of(s));
            for (int c : p.concurrencies()) row.add(rate(o, s, c).map(Format::rate).orElse(failed(o, s, c)));
            rates.row(row.toArray(String[]::new));
        }
        StringBuilder out = new StringBuilder();
        out.append("Peers. ").append(Format.count(p.peerJobs())).append(" no-op jobs queued up front (not timed), drained by one worker")
                .append(" process (this JVM) with c\nslots; jobs/second from the first job picked up to the last outcome committed")
                .append(" (start-up not timed).\nEach system on a fresh database of its own on the same server, the three one after")
                .append(" the other at each c,\nin ").append(p.runs()).append(" round(s) of every system at every c; each cell the median of its runs:\n\n")
                .append(rates.render());
        String jobq = systems.isEmpty() ? null : systems.getFirst();
        if (systems.size() > 1) {
            TextTable ratios = new TextTable(head("jobq ÷ peer", p.concurrencies(), " slot", " slots"));
            for (String s : systems.subList(1, systems.size())) {
                List<String> row = new ArrayList<>(List.of(s));
                for (int c : p.concurrencies()) {
                    Optional<Double> a = rate(o, jobq, c);
                    Optional<Double> b = rate(o, s, c);
                    row.add(a.isPresent() && b.isPresent() && b.get() > 0 ? Format.ratio(a.get() / b.get()) : "-");
                }
                ratios.row(row.toArray(String[]::new));
            }
            out.append("\njobq's jobs/s divided by each peer's, at the same concurrency:\n\n").append(ratios.render());
        }
        out.append("\nSettings used:\n");
        o.settings().forEach((s, lines) -> {
            out.append("  ").append(s).append('\n');
            for (String l : lines) out.append("    ").append(l).append('\n');
        });
        return out.toString();
    }

    static String enqueue(List<EnqueueExperiment.Cell> cells, Plan p) {
        TextTable rates = new TextTable(head("way in", p.concurrencies(), " client", " clients"));
        TextTable fractions = new TextTable(head("way in", p.concurrencies(), " client", " clients"));
        for (EnqueueExperiment.Path path : EnqueueExperiment.Path.values()) {
            List<String> row = new ArrayList<>(List.of(path.label));
            List<String> frac = new ArrayList<>(List.of(path.label));
            boolean any = false;
            for (int c : p.concurrencies()) {
                Optional<Double> r = enqueueRate(cells, path, c);
                Optional<Double> f = enqueueRate(cells, path.floor(), c);
                any |= r.isPresent();
                row.add(r.map(Format::rate).orElse("-"));
                frac.add(r.isPresent() && f.isPresent() && f.get() > 0 ? Format.percent(r.get() / f.get()) : "-");
            }
            if (!any) continue;
            rates.row(row.toArray(String[]::new));
            if (path.floor() != path) fractions.row(frac.toArray(String[]::new));
        }
        return "Enqueue. Jobs/second into an empty queue, all clients together (tenant and queue \"default\"; the HTTP API\n"
                + "in this JVM with a pool of 10; each JobClient caller and floor client on a connection of its own);\n"
                + Format.count(p.enqueueJobs()) + " jobs per one-job row, at least " + p.enqueueBatches()
                + " batches (one per client) per batch row;\nafter as many calls of each way in, not counted (JIT):\n\n"
                + rates.render()
                + "\nAs a fraction of the matching floor (one row per transaction, or 1,000 rows per statement):\n\n"
                + fractions.render();
    }

    static String growth(GrowthExperiment.Result g, Plan p) {
        TextTable t = new TextTable("jobs table", "jobs/s", "ratio");
        t.row("only the queued jobs", Format.rate(g.empty()), "1.00×");
        t.row("beside " + Format.count(g.doneRows()) + " done rows (" + g.tableBytes() / (1024 * 1024) + " MB)", Format.rate(g.grown()),
                g.empty() > 0 ? Format.ratio(g.grown() / g.empty()) : "-");
        return "Table growth. " + Format.count(p.growthJobs()) + " no-op jobs drained by one worker with "
                + GrowthExperiment.CONCURRENCY + " slots, median of " + p.growthPairs() + " run(s),\nwith and without "
                + Format.count(g.doneRows()) + " finished rows in the table (inserted and vacuumed in "
                + Format.seconds(g.fillSeconds()) + ", before timing),\nin two databases on one server, run in pairs back to back"
                + " (target: within 20%):\n\n" + t.render();
    }

    static String raw(Results r) {
        StringBuilder out = new StringBuilder();
        for (DeploymentCell d : r.deployment) {
            out.append(String.format(Locale.ROOT, "jobq  one worker, concurrency %2d, prefetch %2d, claim batch %3d: %s jobs/s -> median %s; %.2f jobs per claim%n",
                    d.concurrency(), d.prefetch(), d.claimBatch(), String.join(", ", d.runsJobsPerSecond().stream().map(Format::rate).toList()),
                    Format.rate(d.jobsPerSecond()), d.meanJobsPerClaim()));
        }
        r.peers.ifPresent(o -> o.results().forEach(x -> out.append(String.format(Locale.ROOT, "peer %s, concurrency %d: %s%n",
                x.system(), x.concurrency(), x.drain().map(d -> String.format(Locale.ROOT, "%.1f jobs/s, %.2f s from start to first job", d.jobsPerSecond(), d.startupSeconds())
                        + (Double.isNaN(d.jobsPerClaim()) ? "" : String.format(Locale.ROOT, ", %.2f jobs per claim", d.jobsPerClaim())))
                        .orElse("FAILED: " + x.error().orElse("?"))))));
        for (EnqueueExperiment.Cell c : r.enqueue) {
            out.append(String.format(Locale.ROOT, "enqueue %s, %d client(s): %.1f jobs/s%n", c.path().label, c.clients(), c.jobsPerSecond()));
        }
        r.growth.ifPresent(g -> out.append(String.format(Locale.ROOT,
                "growth: empty table %s jobs/s; beside %,d done rows %s jobs/s; filled in %.1f s; table %,d bytes%n",
                String.join(", ", g.emptyRates().stream().map(Format::rate).toList()), g.doneRows(),
                String.join(", ", g.grownRates().stream().map(Format::rate).toList()), g.fillSeconds(), g.tableBytes())));
        return out.toString();
    }

    private static String[] head(String first, List<Integer> counts, String one, String many) {
        List<String> head = new ArrayList<>(List.of(first));
        for (int i = 0; i < counts.size(); i++) {
            int c = counts.get(i);
            head.add(i == 0 ? c + (c == 1 ? one : many) : String.valueOf(c));
        }
        return head.toArray(String[]::new);
    }

    /** The median jobs/s of the runs of {@code system} at {@code c} that ran; empty when none did. */
    private static Optional<Double> rate(PeerExperiment.Outcome o, String system, int c) {
        List<Double> runs = o.results().stream().filter(r -> r.system().equals(system) && r.concurrency() == c)
                .flatMap(r -> r.drain().stream()).map(Drain::jobsPerSecond).toList();
        return runs.isEmpty() ? Optional.empty() : Optional.of(Percentiles.of(runs).p50());
    }

    private static String failed(PeerExperiment.Outcome o, String system, int c) {
        return o.results().stream().anyMatch(r -> r.system().equals(system) && r.concurrency() == c && r.error().isPresent())
                ? "failed" : "-";
    }

    private static Optional<Double> enqueueRate(List<EnqueueExperiment.Cell> cells, EnqueueExperiment.Path path, int c) {
        return cells.stream().filter(x -> x.path() == path && x.clients() == c).findFirst().map(EnqueueExperiment.Cell::jobsPerSecond);
    }
}
