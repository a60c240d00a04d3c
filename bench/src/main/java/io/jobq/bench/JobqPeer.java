package io.jobq.bench;

/** jobq in the peer comparison: one worker with c slots ({@link OneWorker}), in the bench database. */
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
        return OneWorker.describe(concurrency);
    }

    @Override
    public Drain drain(int jobs, int concurrency) {
        db.reset();
        NoopJobs.enqueue(db, jobs);
        return OneWorker.drain(db, "peer-jobq-" + concurrency, concurrency, jobs);
    }
}
