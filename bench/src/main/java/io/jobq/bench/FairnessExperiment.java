package io.jobq.bench;

import io.jobq.application.port.NewJob;
import io.jobq.application.port.NewJobBatch;
import io.jobq.application.port.TenantUpdate;
import io.jobq.application.worker.HandlerRegistry;
import io.jobq.application.worker.WorkerListener;
import io.jobq.application.worker.WorkerSettings;
import io.jobq.domain.fairness.MaxRunning;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.tenant.TenantId;
import io.jobq.postgres.ClaimOrder;
import io.jobq.postgres.JobClient;
import io.jobq.postgres.PostgresJobStore;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Experiment 1, the noisy neighbour: tenant {@code big} enqueues {@link Plan#fairBigJobs()} jobs in
 * one transaction; then, until big's backlog is cleared, five small tenants submit one job every
 * {@link Plan#fairSmallEvery()} between them (round-robin). {@link Plan#fairWorkers()} single-slot
 * workers run every job as the built-in {@code sleep} of {@link Plan#fairJobMs()} ms. Run once with
 * FIFO claim order, once with fair order, and once with fair order and the flood tenant capped at
 * {@link #BIG_CAP} running jobs ({@code max_running}): a watcher counts big's running jobs as often as it
 * can, and the run checks that it never saw more than the cap.
 *
 * <p>One clock: the database's. A small job's wait is {@code started_at - created_at}, both set by
 * {@code now()} (the enqueue's and the claim's transaction); the backlog clear time is the big
 * tenant's last {@code finished_at} minus its {@code created_at} (one transaction, one value).
 */
record FairnessExperiment(BenchDatabase db, Plan plan, Progress progress) {
    static final String BIG = "big";
    /** The flood tenant's cap in the capped run: a quarter of the 8 workers. */
    static final int BIG_CAP = 2;

    /**
     * @param cap the flood tenant's max_running, if capped
     * @param smallWaitMs small tenants' wait before start, ms, over every small job
     * @param backlogClearSeconds from the flood's enqueue to the big tenant's last completion, s
     * @param bigMostRunning the most of big's jobs the watcher saw running at once
     */
    record Result(ClaimOrder order, Optional<Integer> cap, Percentiles smallWaitMs, double backlogClearSeconds,
            long bigMostRunning) {
        String label() {
            return order == ClaimOrder.FIFO ? "FIFO (oldest first)"
                    : cap.map(c -> "fair, flood capped at " + c).orElse("fair (this project)");
        }
    }

    List<Result> run() {
        List<Result> out = new ArrayList<>();
        out.add(run(ClaimOrder.FIFO, Optional.empty()));
        out.add(run(ClaimOrder.FAIR, Optional.empty()));
        out.add(run(ClaimOrder.FAIR, Optional.of(BIG_CAP)));
        return out;
    }

    private Result run(ClaimOrder order, Optional<Integer> cap) {
        db.reset();
        cap.ifPresent(c -> new PostgresJobStore(db.control()).configureTenant(
                TenantUpdate.cap(TenantId.of(BIG), QueueName.DEFAULT, Optional.of(MaxRunning.of(c)))));
        AtomicLong bigMostRunning = new AtomicLong();
        AtomicBoolean watching = new AtomicBoolean(true);
        Thread watcher = Thread.ofPlatform().name("bench-fairness-watcher").start(() -> {
            while (watching.get()) {
                bigMostRunning.accumulateAndGet(db.queryLong("SELECT count(*) FROM jobs WHERE tenant = 'big' AND state = 'running'"),
                        Math::max);
            }
        });
        AtomicInteger bigDone = new AtomicInteger();
        WorkerListener countBig = new WorkerListener() {
            @Override
            public void completed(Job job) {
                if (job.tenant().value().equals(BIG)) bigDone.incrementAndGet();
            }
        };
        // Single-slot workers: one claim loop each, one job per claim, as the seed's 8 worker processes.
        WorkerSettings settings = WorkerSettings.builder().concurrency(1).claimBatchSize(1).build();
        int small;
        try (WorkerGroup workers = new WorkerGroup(db, "fair-" + order.name().toLowerCase() + cap.map(c -> "-capped").orElse(""),
                plan.fairWorkers(), 3,
                PostgresJobStore.Options.DEFAULTS.withClaimOrder(order), HandlerRegistry.withBuiltIns(), settings, countBig)) {
            workers.start();
            progress.step("fairness %s%s: %d single-slot workers started; tenant %s enqueues %s jobs of %d ms",
                    order, cap.map(c -> ", big capped at " + c).orElse(""), plan.fairWorkers(), BIG,
                    Format.count(plan.fairBigJobs()), plan.fairJobMs());
            enqueueFlood();
            small = submitSmallUntilBigDone(bigDone);
            int total = plan.fairBigJobs() + small;
            Waits.until(() -> db.queryLong("SELECT count(*) FROM jobs WHERE state = 'done'") >= total,
                    Duration.ofMillis(100), Duration.ofMinutes(5), "every job of the fairness run to finish");
        } finally {
            watching.set(false);
            joinQuietly(watcher);
        }
        List<Double> waits = db.queryDoubles("""
                SELECT extract(epoch FROM started_at - created_at) * 1000 FROM jobs WHERE tenant <> 'big'""");
        double clear = db.queryDoubles("""
                SELECT extract(epoch FROM max(finished_at) - min(created_at)) FROM jobs WHERE tenant = 'big'""").getFirst();
        Result r = new Result(order, cap, Percentiles.of(waits), clear, bigMostRunning.get());
        progress.step("fairness %s: %d small jobs waited p50 %s, p95 %s, max %s; big backlog cleared in %s; big ran at most %d at once",
                r.label(), small, Format.millis(r.smallWaitMs().p50()), Format.millis(r.smallWaitMs().p95()),
                Format.millis(r.smallWaitMs().max()), Format.seconds(clear), r.bigMostRunning());
        return r;
    }

    private static void joinQuietly(Thread t) {
        try {
            t.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** All of big's jobs in ONE transaction (batches of 1,000), so they share one created_at: "at once". */
    private void enqueueFlood() {
        JobClient client = new JobClient();
        String payload = "{\"ms\": " + plan.fairJobMs() + "}";
        try (Connection c = db.control().getConnection()) {
            c.setAutoCommit(false);
            for (int done = 0; done < plan.fairBigJobs(); ) {
                int n = Math.min(NewJobBatch.MAX_SIZE, plan.fairBigJobs() - done);
                client.enqueueBatch(c, new NewJobBatch(TenantId.of(BIG), QueueName.DEFAULT, TaskName.of("sleep"),
                        java.util.Collections.nCopies(n, payload), Job.DEFAULT_MAX_ATTEMPTS, Duration.ZERO));
                done += n;
            }
            c.commit();
        } catch (SQLException e) {
            throw new BenchException("enqueueing the flood failed: " + e.getMessage(), e);
        }
    }

    /** Submits small jobs on a fixed schedule until big's backlog is done; returns how many. */
    private int submitSmallUntilBigDone(AtomicInteger bigDone) {
        PostgresJobStore client = new PostgresJobStore(db.control());
        String payload = "{\"ms\": " + plan.fairJobMs() + "}";
        long every = plan.fairSmallEvery().toNanos();
        long next = System.nanoTime();
        int n = 0;
        long deadline = System.nanoTime() + Duration.ofMinutes(10).toNanos();
        while (bigDone.get() < plan.fairBigJobs()) {
            if (System.nanoTime() > deadline) throw new BenchException("the flood was not cleared within 10 minutes");
            TenantId tenant = TenantId.of("small-" + (n % plan.fairSmallTenants() + 1));
            client.enqueue(NewJob.of(tenant, QueueName.DEFAULT, TaskName.of("sleep"), payload));
            n++;
            // A fixed schedule, not "sleep 100 ms after each": a slow enqueue does not thin the arrivals.
            next += every;
            Waits.sleepUntil(next);
        }
        return n;
    }
}
