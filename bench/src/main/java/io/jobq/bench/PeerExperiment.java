package io.jobq.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The peer comparison: jobq, db-scheduler and JobRunr each drain {@link Plan#peerJobs()} queued
 * no-op jobs with one worker process (this JVM) of c slots, for each c of {@link Plan#concurrencies()},
 * one after the other at each c, so the three are measured minutes apart at most, on the same server
 * and disk; {@link Plan#runs()} rounds of that, each round all systems at all c again, so a noisy minute
 * costs every system alike and the report shows each cell's median. Each peer gets a fresh database of
 * its own; enqueueing is not timed.
 */
final class PeerExperiment {
    /**
     * One run of one system at one concurrency.
     *
     * @param drain what was measured; empty when the run failed
     * @param error why it failed; empty when it ran
     */
    record Result(String system, int concurrency, Optional<Drain> drain, Optional<String> error) {}

    /**
     * @param results every run of every cell, in run order
     * @param settings each system's settings at each concurrency, in the order measured
     */
    record Outcome(List<Result> results, Map<String, List<String>> settings) {}

    static final int WARM_UP_JOBS = 100;
    static final int WARM_UP_CONCURRENCY = 4;

    private final Plan plan;
    private final Progress progress;
    private final List<PeerSystem> systems;

    PeerExperiment(BenchDatabase db, Plan plan, Progress progress) {
        this(plan, progress, List.of(new JobqPeer(db), new DbSchedulerPeer(db), new JobRunrPeer(db)));
    }

    PeerExperiment(Plan plan, Progress progress, List<PeerSystem> systems) {
        this.plan = plan;
        this.progress = progress;
        this.systems = List.copyOf(systems);
    }

    Outcome run() {
        // Each system drains a few jobs first, not counted: the first run in a JVM pays for class
        // loading and JIT, and whichever system went first would pay for all of them.
        int warmUp = Math.min(WARM_UP_JOBS, plan.peerJobs());
        for (PeerSystem s : systems) {
            try {
                s.drain(warmUp, WARM_UP_CONCURRENCY);
            } catch (RuntimeException e) {
                progress.step("peers %s: warm-up failed (%s); measuring anyway", s.name(), e.getMessage());
            }
        }
        progress.step("peers: each system warmed up with %d jobs", warmUp);
        List<Result> results = new ArrayList<>();
        Map<String, List<String>> settings = new LinkedHashMap<>();
        for (int c : plan.concurrencies()) {
            for (PeerSystem s : systems) settings.computeIfAbsent(s.name(), k -> new ArrayList<>()).add("c=" + c + ": " + s.settings(c));
        }
        for (int round = 1; round <= plan.runs(); round++) {
            for (int c : plan.concurrencies()) {
                for (PeerSystem s : systems) results.add(measure(s, c, round));
            }
        }
        return new Outcome(results, settings);
    }

    private Result measure(PeerSystem s, int c, int round) {
        try {
            Drain d = s.drain(plan.peerJobs(), c);
            progress.step("peers %s, concurrency %d, run %d/%d: %s jobs/s", s.name(), c, round, plan.runs(), Format.rate(d.jobsPerSecond()));
            return new Result(s.name(), c, Optional.of(d), Optional.empty());
        } catch (RuntimeException e) {
            String what = e.getMessage() == null ? e.toString() : e.getMessage();
            progress.step("peers %s, concurrency %d, run %d/%d FAILED: %s", s.name(), c, round, plan.runs(), what);
            e.printStackTrace(System.err);
            return new Result(s.name(), c, Optional.empty(), Optional.of(what));
        }
    }
}
