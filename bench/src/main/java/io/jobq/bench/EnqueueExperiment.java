package io.jobq.bench;

import com.zaxxer.hikari.HikariDataSource;
import io.jobq.application.port.NewJob;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.tenant.TenantId;
import io.jobq.http.HttpApi;
import io.jobq.http.HttpSettings;
import io.jobq.postgres.JobClient;
import io.jobq.postgres.PostgresJobStore;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Enqueue throughput: jobs/s into an empty queue through each way in, at each client count of
 * {@link Plan#concurrencies()}, beside an INSERT floor of the same row shape. Every job is a no-op of
 * tenant and queue "default" (what {@code POST /jobs} without them gives), so concurrent clients share
 * one tenant row, whose fair tag every enqueue advances. The HTTP API runs in this JVM on a free port
 * with the launcher's pool of 10 connections, and clients use {@link HttpClient} (HTTP/1.1, keep-alive).
 */
final class EnqueueExperiment {
    /** The rows of the table: a way in, and how many jobs one call enqueues. */
    enum Path {
        HTTP_ONE("HTTP POST /jobs", 1),
        JOB_CLIENT("JobClient, one job per caller transaction", 1),
        FLOOR_ONE("floor: INSERT, one row per transaction", 1),
        HTTP_BATCH("HTTP POST /jobs/batch, 1,000 per request", BATCH),
        FLOOR_BATCH("floor: INSERT of 1,000 rows per statement", BATCH);

        final String label;
        final int jobsPerCall;

        Path(String label, int jobsPerCall) {
            this.label = label;
            this.jobsPerCall = jobsPerCall;
        }

        /** The floor row this path is compared with. */
        Path floor() {
            return jobsPerCall == 1 ? FLOOR_ONE : FLOOR_BATCH;
        }
    }

    /** @param jobsPerSecond jobs committed ÷ wall time of the cell, all clients together */
    record Cell(Path path, int clients, double jobsPerSecond) {}

    static final int BATCH = 1000;

    /** The floor's row: what jobq's enqueue writes for a runnable job, without the tenant's fair tag. */
    static final String INSERT_ONE = "INSERT INTO jobq.jobs (queue, tenant, task, payload, state, vtime, max_attempts) "
            + "VALUES ('default', 'default', 'noop', '{}'::jsonb, 'queued', 0, 5)";
    static final String INSERT_BATCH = "INSERT INTO jobq.jobs (queue, tenant, task, payload, state, vtime, max_attempts) "
            + "SELECT 'default', 'default', 'noop', p::jsonb, 'queued', 0, 5 FROM unnest(?::text[]) AS p";

    private final BenchDatabase db;
    private final Plan plan;
    private final Progress progress;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private final String batchBody = "{\"task\": \"noop\", \"payloads\": [" + String.join(", ", Collections.nCopies(BATCH, "{}")) + "]}";
    private URI jobs;
    private URI jobsBatch;

    EnqueueExperiment(BenchDatabase db, Plan plan, Progress progress) {
        this.db = db;
        this.plan = plan;
        this.progress = progress;
    }

    List<Cell> run() {
        List<Cell> cells = new ArrayList<>();
        try (HikariDataSource apiPool = db.pool("bench-api", 10)) {
            HttpApi api = HttpApi.create(new PostgresJobStore(apiPool), new PrometheusMeterRegistry(PrometheusConfig.DEFAULT),
                    HttpSettings.DEFAULTS).start(0);
            try {
                jobs = URI.create("http://127.0.0.1:" + api.port() + "/jobs");
                jobsBatch = URI.create("http://127.0.0.1:" + api.port() + "/jobs/batch");
                // One cell's worth of calls of each path first, not counted: 50 left the JIT compiling the HTTP
                // path during the first cells (compiler threads were half the JVM's CPU in a profile), which
                // measured the JIT, not a server that has been up for a while.
                for (Path p : Path.values()) measure(p, 1, warmUpCalls(plan, p));
                progress.step("enqueue: warmed up (HTTP API on port %d)", api.port());
                for (Path p : Path.values()) {
                    for (int c : plan.concurrencies()) {
                        int calls = p.jobsPerCall == 1 ? plan.enqueueJobs() : Math.max(c, plan.enqueueBatches());
                        double rate = measure(p, c, calls);
                        cells.add(new Cell(p, c, rate));
                        progress.step("enqueue %s, %d client(s): %s jobs/s", p.label, c, Format.rate(rate));
                    }
                }
            } finally {
                api.stop();
            }
        }
        return cells;
    }

    /** Calls of {@code p} made before the first cell, not counted: as many as one cell of it makes. */
    static int warmUpCalls(Plan plan, Path p) {
        return p.jobsPerCall == 1 ? plan.enqueueJobs() : plan.enqueueBatches();
    }

    /** One cell: an empty table, {@code calls} calls (rounded up to a multiple of clients) spread over the clients. */
    private double measure(Path p, int clients, int calls) {
        db.reset();
        db.execute("INSERT INTO tenants (queue, tenant) VALUES ('default', 'default')"); // the floor's rows need it
        int perClient = (calls + clients - 1) / clients;
        List<Caller> callers = new ArrayList<>();
        try {
            List<StartingGun.Loop> loops = new ArrayList<>();
            for (int i = 0; i < clients; i++) {
                Caller caller = caller(p);
                callers.add(caller);
                loops.add(() -> {
                    for (int k = 0; k < perClient; k++) caller.call();
                });
            }
            long took = StartingGun.time("enqueue " + p.label, loops);
            long expected = (long) perClient * clients * p.jobsPerCall;
            long queued = db.queryLong("SELECT count(*) FROM jobs WHERE state = 'queued'");
            if (queued != expected) throw new BenchException("enqueue " + p.label + ": " + queued + " jobs queued, expected " + expected);
            return expected / (took / 1e9);
        } finally {
            for (Caller c : callers) c.close();
        }
    }

    /** One client of one path: its own connection where it needs one. */
    private interface Caller extends AutoCloseable {
        void call() throws Exception;

        @Override
        default void close() {}
    }

    private Caller caller(Path p) {
        return switch (p) {
            case HTTP_ONE -> () -> post(jobs, "{\"task\": \"noop\"}");
            case HTTP_BATCH -> () -> post(jobsBatch, batchBody);
            case JOB_CLIENT -> connected(c -> {
                c.setAutoCommit(false);
                JobClient client = new JobClient();
                NewJob job = NewJob.of(TenantId.DEFAULT, QueueName.DEFAULT, NoopJobs.NOOP, "{}");
                return () -> {
                    client.enqueue(c, job);
                    c.commit();
                };
            });
            case FLOOR_ONE -> connected(c -> {
                PreparedStatement insert = c.prepareStatement(INSERT_ONE);
                return insert::executeUpdate;
            });
            case FLOOR_BATCH -> connected(c -> {
                PreparedStatement insert = c.prepareStatement(INSERT_BATCH);
                insert.setArray(1, c.createArrayOf("text", Collections.nCopies(BATCH, "{}").toArray()));
                return insert::executeUpdate;
            });
        };
    }

    private interface Call {
        void call() throws Exception;
    }

    private interface Setup {
        Call on(Connection c) throws Exception;
    }

    /** A caller with a plain connection of its own (outside any pool, as the floor's loops). */
    private Caller connected(Setup setup) {
        try {
            Connection c = db.connect();
            Call call = setup.on(c);
            return new Caller() {
                @Override
                public void call() throws Exception {
                    call.call();
                }

                @Override
                public void close() {
                    try {
                        c.close();
                    } catch (Exception ignored) {
                        // closing anyway
                    }
                }
            };
        } catch (Exception e) {
            throw new BenchException("enqueue: cannot connect: " + e.getMessage(), e);
        }
    }

    private void post(URI uri, String body) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(uri).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 201) throw new BenchException("POST " + uri.getPath() + " answered " + r.statusCode() + ": " + r.body());
    }
}
