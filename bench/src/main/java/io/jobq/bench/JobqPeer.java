package io.jobq.bench;

/**
 * jobq in the peer comparison: one worker with c slots ({@link OneWorker}), in the bench database, set up
 * as docs/benchmarks.md recommends for short jobs ({@code --prefetch} {@value OneWorker#THROUGHPUT_PREFETCH}),
 * as each peer is set up as its docs recommend for throughput.
 */
final class JobqPeer implements PeerSystem {
    private final BenchDatabase db;

    JobqPeer(BenchDatabase db) {
        this.db = db;
    }

    @Override
    public String name() {
        return "jobq (this build)";
    }

    @Override
    public String settings(int concurrency) {
        return OneWorker.describe(concurrency, OneWorker.THROUGHPUT_PREFETCH);
    }

    @Override
    public Drain drain(int jobs, int concurrency) {
        db.reset();
        NoopJobs.enqueue(db, jobs);
        return OneWorker.drain(db, "peer-jobq-" + concurrency, concurrency, OneWorker.THROUGHPUT_PREFETCH, jobs);
    }
}
