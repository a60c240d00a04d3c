package io.jobq.bootstrap.robustness;

import io.jobq.application.fake.Await;
import io.jobq.application.port.EnqueueResult;
import io.jobq.application.port.NewJob;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.tenant.TenantId;
import io.jobq.postgres.PostgresJobStore;
import io.jobq.postgres.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/** Enqueues through the real store and reads job rows (with the database's now()) straight from SQL. */
final class Jobs {
    private final TestDatabase db;
    private final PostgresJobStore store;

    Jobs(TestDatabase db) {
        this.db = db;
        this.store = new PostgresJobStore(db.dataSource());
    }

    PostgresJobStore store() {
        return store;
    }

    /** Enqueues {@code task} with {@code payload} for tenant t1 on queue default; returns the job id. */
    long enqueue(String task, String payload) {
        return enqueue(NewJob.of(new TenantId("t1"), new QueueName("default"), TaskName.of(task), payload));
    }

    long enqueue(NewJob job) {
        return switch (store.enqueue(job)) {
            case EnqueueResult.Created c -> c.job().id().value();
            case EnqueueResult.Existing e -> throw new AssertionError("unexpected existing job " + e.job().id());
        };
    }

    /** One job's row as stored, with the database's now() at the moment of reading. */
    record Row(long id, String state, int attempts, int maxAttempts, String lockedBy, Instant lockedUntil,
            String lastError, Instant runAt, Instant createdAt, Instant startedAt, Instant finishedAt,
            String result, Instant dbNow) {

        boolean runningWithExpiredLease() {
            return state.equals("running") && lockedUntil.isBefore(dbNow);
        }
    }

    private static final String SELECT = """
            SELECT id, state, attempts, max_attempts, locked_by, locked_until, last_error, run_at, created_at,
                   started_at, finished_at, result::text, now() FROM jobs""";

    Row row(long id) {
        List<Row> rows = query(SELECT + " WHERE id = " + id);
        if (rows.isEmpty()) throw new AssertionError("job " + id + " does not exist");
        return rows.getFirst();
    }

    List<Row> all() {
        return query(SELECT + " ORDER BY id");
    }

    /** Polls job {@code id} until {@code condition} holds; returns that row. */
    Row await(long id, Duration timeout, String what, Predicate<Row> condition) {
        Row[] last = new Row[1];
        try {
            return Await.value(timeout, "job " + id + " " + what, () -> {
                Row r = row(id);
                last[0] = r;
                return condition.test(r) ? r : null;
            });
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; last row: " + last[0], e);
        }
    }

    Instant dbNow() {
        return queryInstant("SELECT now()");
    }

    /** The one timestamptz that {@code sql} selects. */
    Instant queryInstant(String sql) {
        try (Connection c = db.dataSource().getConnection(); PreparedStatement st = c.prepareStatement(sql);
             ResultSet rs = st.executeQuery()) {
            rs.next();
            return rs.getTimestamp(1).toInstant();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private List<Row> query(String sql) {
        try (Connection c = db.dataSource().getConnection(); PreparedStatement st = c.prepareStatement(sql);
             ResultSet rs = st.executeQuery()) {
            List<Row> out = new ArrayList<>();
            while (rs.next()) {
                out.add(new Row(rs.getLong(1), rs.getString(2), rs.getInt(3), rs.getInt(4), rs.getString(5),
                        instant(rs.getTimestamp(6)), rs.getString(7), instant(rs.getTimestamp(8)),
                        instant(rs.getTimestamp(9)), instant(rs.getTimestamp(10)), instant(rs.getTimestamp(11)),
                        rs.getString(12), instant(rs.getTimestamp(13))));
            }
            return out;
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Instant instant(Timestamp t) {
        return t == null ? null : t.toInstant();
    }
}
