package io.jobq.bench;

import java.util.ArrayList;
import java.util.List;

/**
 * Table growth: does a table full of finished jobs slow claims down? jobq drains
 * {@link Plan#growthJobs()} queued no-op jobs with one worker of the launcher's default
 * {@value #CONCURRENCY} slots ({@link OneWorker}), first with the table otherwise empty, then beside
 * {@link Plan#growthRows()} done rows of another tenant, inserted with one
 * {@code INSERT … SELECT generate_series} and vacuumed and analysed before measuring (as autovacuum
 * would have by then). {@link Plan#runs()} runs each; the report compares their medians.
 */
record GrowthExperiment(BenchDatabase db, Plan plan, Progress progress) {
    static final int CONCURRENCY = 4;
    static final int WARM_UP_JOBS = 200;

    /** The finished rows: done a day ago, one attempt each, of tenant "filler" (not the drained jobs' "bench"). */
    static final String FILL = """
            INSERT INTO jobs (queue, tenant, task, payload, state, vtime, run_at, attempts, max_attempts,
                              created_at, started_at, finished_at)
            SELECT 'default', 'filler', 'noop', '{}'::jsonb, 'done', g, now() - interval '1 day', 1, 5,
                   now() - interval '1 day', now() - interval '1 day', now() - interval '1 day'
            FROM generate_series(1, %d) AS g""";

    /**
     * @param emptyRates jobs/s of each run with no other rows
     * @param grownRates jobs/s of each run beside {@code doneRows} done rows
     * @param fillSeconds how long inserting and vacuuming the done rows took
     * @param tableBytes the jobs table with its indexes and TOAST, after filling
     */
    record Result(int doneRows, List<Double> emptyRates, List<Double> grownRates, double fillSeconds, long tableBytes) {
        Result {
            emptyRates = List.copyOf(emptyRates);
            grownRates = List.copyOf(grownRates);
        }

        double empty() {
            return Percentiles.of(emptyRates).p50();
        }

        double grown() {
            return Percentiles.of(grownRates).p50();
        }
    }

    Result run() {
        // Not counted: a first drain in a fresh JVM pays for JIT, and would make the empty table look slow.
        db.reset();
        NoopJobs.enqueue(db, Math.min(WARM_UP_JOBS, plan.growthJobs()));
        OneWorker.drain(db, "growth-warm-up", CONCURRENCY, 0, Math.min(WARM_UP_JOBS, plan.growthJobs()));
        List<Double> empty = new ArrayList<>();
        for (int r = 1; r <= plan.runs(); r++) {
            db.reset();
            empty.add(drain("empty table", r));
        }
        db.reset();
        long t0 = System.nanoTime();
        db.execute("INSERT INTO tenants (queue, tenant) VALUES ('default', 'filler')");
        db.execute(FILL.formatted(plan.growthRows()));
        db.execute("VACUUM ANALYZE jobs");
        double fillSeconds = (System.nanoTime() - t0) / 1e9;
        long bytes = db.queryLong("SELECT pg_total_relation_size('jobs')");
        progress.step("growth: %s done rows inserted and vacuumed in %s (jobs table %d MB)", Format.count(plan.growthRows()),
                Format.seconds(fillSeconds), bytes / (1024 * 1024));
        List<Double> grown = new ArrayList<>();
        for (int r = 1; r <= plan.runs(); r++) {
            // The previous run's jobs go; the filler stays.
            db.execute("DELETE FROM jobs WHERE tenant = 'bench'");
            db.execute("VACUUM ANALYZE jobs");
            grown.add(drain(Format.count(plan.growthRows()) + " done rows", r));
        }
        long filler = db.queryLong("SELECT count(*) FROM jobs WHERE tenant = 'filler' AND state = 'done'");
        if (filler != plan.growthRows()) throw new BenchException("growth: " + filler + " filler rows left of " + plan.growthRows());
        return new Result(plan.growthRows(), empty, grown, fillSeconds, bytes);
    }

    private double drain(String beside, int run) {
        NoopJobs.enqueue(db, plan.growthJobs());
        Drain d = OneWorker.drain(db, "growth", CONCURRENCY, 0, plan.growthJobs());
        progress.step("growth, %s, run %d/%d: %s jobs/s", beside, run, plan.runs(), Format.rate(d.jobsPerSecond()));
        return d.jobsPerSecond();
    }
}
