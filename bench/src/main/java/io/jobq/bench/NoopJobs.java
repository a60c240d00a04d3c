package io.jobq.bench;

import io.jobq.application.port.NewJobBatch;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.tenant.TenantId;
import io.jobq.postgres.JobClient;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Collections;

/** Fills the queue before a throughput or floor run: n no-op jobs of one tenant, in one transaction. */
final class NoopJobs {
    static final TaskName NOOP = TaskName.of("noop");
    /** The tenant of {@link #enqueue(BenchDatabase, int)}'s jobs (growth's filler rows are another's). */
    static final TenantId TENANT = TenantId.of("bench");

    private NoopJobs() {}

    static void enqueue(BenchDatabase db, int n) {
        enqueue(db, n, TENANT, QueueName.DEFAULT, NOOP, "{}");
    }

    /**
     * {@link #enqueue(BenchDatabase, int)}, then a {@code CHECKPOINT} (best effort): the start of every run that
     * is compared with another run (a throughput run and its floor run, growth's two tables), so that both meet
     * the server in the same state. Under the throughput runs PostgreSQL begins a checkpoint every ~2 minutes
     * (max_wal_size, 1 GB by default), and after one begins the first change to each page writes the whole page
     * to the WAL (full_page_writes): a checkpoint beginning inside one run of a pair and not the other tilted
     * that pair's ratio. Now every compared run begins right after one, and pays the same.
     */
    static void enqueueAfresh(BenchDatabase db, int n) {
        enqueue(db, n);
        db.checkpoint();
    }

    static void enqueue(BenchDatabase db, int n, TenantId tenant, QueueName queue, TaskName task, String payload) {
        JobClient client = new JobClient();
        try (Connection c = db.control().getConnection()) {
            c.setAutoCommit(false);
            for (int done = 0; done < n; ) {
                int k = Math.min(NewJobBatch.MAX_SIZE, n - done);
                client.enqueueBatch(c, new NewJobBatch(tenant, queue, task, Collections.nCopies(k, payload),
                        Job.DEFAULT_MAX_ATTEMPTS, Duration.ZERO));
                done += k;
            }
            c.commit();
        } catch (SQLException e) {
            throw new BenchException("enqueueing " + n + " jobs failed: " + e.getMessage(), e);
        }
        // Fresh statistics, so the claim's plan is the same in every run.
        db.execute("ANALYZE jobs");
    }
}
