package io.jobq.postgres;

import static io.jobq.postgres.schema.Tables.JOBS;

import io.jobq.application.port.CancelResult;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.JobState;
import io.jobq.domain.lease.FencingToken;
import io.jobq.domain.lease.WorkerId;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.jooq.DSLContext;
import org.jooq.Record;
import org.jooq.impl.DSL;

/**
 * Cancelling jobs ({@link io.jobq.application.port.JobStore#cancel}). A job that is not running is
 * cancelled in one short transaction holding its row lock, so a claim (which skips locked rows) can never
 * take it meanwhile, and a claim that took it first makes this a request instead. A running job gets
 * {@code cancel_requested}; the outcome statement ({@link OutcomeStatement}) and the reaper turn its run's
 * end into {@code cancelled} unless the run succeeded.
 */
final class Cancellations {
    /**
     * The runs among the tokens whose job still runs under that token and has cancelling requested; fenced as
     * {@link OutcomeStatement} fences, by {@code t.running} and not the literal, so each id is looked up by key.
     */
    private static final String REQUESTED = """
            WITH t AS MATERIALIZED (
                SELECT *, 'running'::text AS running FROM unnest({0}::bigint[], {1}::text[], {2}::int[]) AS t(id, worker, attempt)
            )
            SELECT j.id, j.locked_by, j.attempts FROM jobq.jobs j JOIN t ON j.id = t.id
            WHERE j.locked_by = t.worker AND j.attempts = t.attempt AND j.state = t.running AND j.cancel_requested""";

    private Cancellations() {}

    /**
     * Cancels or requests cancelling, in one transaction. A queued job of a gated tenant (capped, or in a
     * work queue) freed room: its key goes to {@code freed} for the caller to release after commit.
     */
    static CancelResult cancel(DSLContext dsl, JobId id, TenantCaps.EndedRuns freed) {
        return dsl.transactionResult(cfg -> cancelIn(cfg.dsl(), id, freed));
    }

    /**
     * {@link #cancel}'s work on {@code tx}, which must be inside a transaction (the store's own, or a
     * caller's for {@link JobClient#cancel}); the job's row lock is held until that transaction ends.
     */
    static CancelResult cancelIn(DSLContext tx, JobId id, TenantCaps.EndedRuns freed) {
        Record row = tx.select(JOBS.STATE, JOBS.QUEUE, JOBS.TENANT, JOBS.CAPPED).from(JOBS)
                .where(JOBS.ID.eq(id.value())).forUpdate().fetchOne();
        if (row == null) return new CancelResult.NotFound(id);
        JobState state = JobState.fromDbName(row.get(JOBS.STATE));
        switch (state) {
            case SCHEDULED, QUEUED, HELD -> {
                tx.update(JOBS).set(JOBS.STATE, JobState.CANCELLED.dbName()).set(JOBS.FINISHED_AT, DSL.currentOffsetDateTime())
                        .where(JOBS.ID.eq(id.value())).execute();
                if (state == JobState.QUEUED && Boolean.TRUE.equals(row.get(JOBS.CAPPED))) {
                    freed.addGated(new TenantCaps.Key(row.get(JOBS.QUEUE), row.get(JOBS.TENANT)));
                }
                return new CancelResult.Cancelled(read(tx, id));
            }
            case RUNNING -> {
                tx.update(JOBS).set(JOBS.CANCEL_REQUESTED, true).where(JOBS.ID.eq(id.value())).execute();
                return new CancelResult.Requested(read(tx, id));
            }
            case CANCELLED -> {
                return new CancelResult.Cancelled(read(tx, id));
            }
            default -> {
                return new CancelResult.Finished(read(tx, id));
            }
        }
    }

    /** See {@link io.jobq.application.port.JobStore#cancelRequested}. */
    static Set<FencingToken> requested(DSLContext dsl, Collection<FencingToken> tokens) {
        if (tokens.isEmpty()) return Set.of();
        List<FencingToken> list = List.copyOf(tokens);
        Set<FencingToken> out = new HashSet<>();
        for (Record r : dsl.resultQuery(JobqSchema.of(dsl).sql(REQUESTED), list.stream().map(t -> t.job().value()).toArray(Long[]::new),
                list.stream().map(t -> t.worker().value()).toArray(String[]::new),
                list.stream().map(FencingToken::attempt).toArray(Integer[]::new))) {
            out.add(new FencingToken(new JobId(r.get(0, Long.class)), new WorkerId(r.get(1, String.class)), r.get(2, Integer.class)));
        }
        return Set.copyOf(out);
    }

    /** The row as it is now, documents guarded (a legacy row's unprintable payload must not fail the answer). */
    private static io.jobq.domain.job.Job read(DSLContext tx, JobId id) {
        return tx.select(UnreadableRows.guardedColumns(JobqSchema.of(tx))).from(JOBS).where(JOBS.ID.eq(id.value()))
                .fetchSingle(JobRows::toJobLenient);
    }
}
