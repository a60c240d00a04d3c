package io.jobq.bench;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * Table growth: does a table full of finished jobs slow claims down? jobq drains
 * {@link Plan#growthJobs()} queued no-op jobs with one worker of the launcher's default
 * {@value #CONCURRENCY} slots ({@link OneWorker}), in two jobq databases on the same server: this one, with
 * its table otherwise empty, and a sibling holding {@link Plan#growthRows()} done rows of another tenant,
 * inserted with one {@code INSERT … SELECT generate_series} and vacuumed and analysed before measuring (as
 * autovacuum would have by then). The runs go in pairs, one in each database back to back, the first of
 * a pair alternating, so that the machine's drift (its rates move by half within minutes) falls on both
 * sides alike; {@link Plan#growthPairs()} pairs; the report compares the medians. Each run starts right after a
 * {@code CHECKPOINT} ({@link NoopJobs#enqueueAfresh}).
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
        // Not counted: a first drain in a fresh JVM pays for JIT, and would make the first table look slow.
        db.reset();
        NoopJobs.enqueue(db, Math.min(WARM_UP_JOBS, plan.growthJobs()));
        OneWorker.drain(db, "growth-warm-up", CONCURRENCY, 0, Math.min(WARM_UP_JOBS, plan.growthJobs()));
        try (BenchDatabase grownDb = db.createMigratedSibling("grown")) {
            long t0 = System.nanoTime();
            grownDb.execute("INSERT INTO tenants (queue, tenant) VALUES ('default', 'filler')");
            grownDb.execute(FILL.formatted(plan.growthRows()));
            grownDb.execute("VACUUM ANALYZE jobs");
            double fillSeconds = (System.nanoTime() - t0) / 1e9;
            long bytes = grownDb.queryLong("SELECT pg_total_relation_size('jobs')");
            progress.step("growth: %s done rows inserted and vacuumed in %s (jobs table %d MB)", Format.count(plan.growthRows()),
                    Format.seconds(fillSeconds), bytes / (1024 * 1024));
            List<Double> empty = new ArrayList<>();
            List<Double> grown = new ArrayList<>();
            for (int r = 1; r <= plan.growthPairs(); r++) {
                boolean emptyFirst = r % 2 == 1;
                if (emptyFirst) empty.add(drainEmpty(r));
                grown.add(drainGrown(grownDb, r));
                if (!emptyFirst) empty.add(drainEmpty(r));
            }
            long filler = grownDb.queryLong("SELECT count(*) FROM jobs WHERE tenant = 'filler' AND state = 'done'");
            if (filler != plan.growthRows()) throw new BenchException("growth: " + filler + " filler rows left of " + plan.growthRows());
            return new Result(plan.growthRows(), empty, grown, fillSeconds, bytes);
        } catch (SQLException e) {
            throw new BenchException("growth: cannot create the second database: " + e.getMessage(), e);
        }
    }

    private double drainEmpty(int run) {
        db.reset();
        return drain(db, "empty table", run);
    }

    private double drainGrown(BenchDatabase grownDb, int run) {
        // The previous run's jobs go; the filler stays.
        grownDb.execute("DELETE FROM jobs WHERE tenant = '" + NoopJobs.TENANT.value() + "'");
        grownDb.execute("VACUUM ANALYZE jobs");
        return drain(grownDb, Format.count(plan.growthRows()) + " done rows", run);
    }

    private double drain(BenchDatabase in, String beside, int run) {
        NoopJobs.enqueueAfresh(in, plan.growthJobs());
        Drain d = OneWorker.drain(in, "growth", CONCURRENCY, 0, plan.growthJobs());
        progress.step("growth, %s, run %d/%d: %s jobs/s", beside, run, plan.growthPairs(), Format.rate(d.jobsPerSecond()));
        return d.jobsPerSecond();
    }
}
