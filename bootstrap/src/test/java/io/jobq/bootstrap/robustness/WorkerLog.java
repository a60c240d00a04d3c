package io.jobq.bootstrap.robustness;

import java.util.List;

/** What a jobq worker's DEBUG log says about one job. */
final class WorkerLog {
    private WorkerLog() {}

    /** "job 7 attempt 1/5 started" lines: one per handler invocation. */
    static List<String> starts(JobqProcess worker, long job) {
        return worker.lines("job " + job + " attempt ", " started");
    }

    /** "job 7 done (attempt 1/5, …)" lines: completions the store applied. */
    static List<String> dones(JobqProcess worker, long job) {
        return worker.lines("job " + job + " done (attempt ");
    }

    /**
     * Waits for the "job 7 done" line (written just after the store applied the completion, so it may
     * trail the row) and returns every such line.
     */
    static List<String> awaitDones(JobqProcess worker, long job) {
        worker.awaitLine(java.time.Duration.ofSeconds(10), "job " + job + " done (attempt ");
        return dones(worker, job);
    }

    /** "job 7 attempt 1: outcome discarded, …" lines. */
    static List<String> discards(JobqProcess worker, long job) {
        return worker.lines("job " + job + " attempt ", ": outcome discarded");
    }

    /** Every line that names the job. */
    static List<String> mentions(JobqProcess worker, long job) {
        return worker.output().lines().filter(l -> l.contains("job " + job + " ")).toList();
    }
}
