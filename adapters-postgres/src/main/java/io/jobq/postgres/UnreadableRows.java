package io.jobq.postgres;

import static io.jobq.postgres.schema.Tables.JOBS;

import io.jobq.application.port.JobStore;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.StoredText;
import io.jobq.domain.lease.WorkerId;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.jooq.Condition;
import org.jooq.Cursor;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.JSONB;
import org.jooq.Record;
import org.jooq.SelectField;
import org.jooq.impl.DSL;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Rows the code cannot read, one at a time. Schema V2 refuses such rows, but a database may still hold
 * them (its constraints dropped, or rows older than a rule), and one of them must cost one job, never
 * the batch, page or queue it comes with. Two kinds:
 *
 * <ul>
 *   <li>a value the domain refuses (an invalid task name): the statement succeeds, the mapping fails.
 *       The claim quarantines the row ({@link #quarantine}); reads map names leniently ({@link JobRows}).
 *   <li>a value PostgreSQL cannot print (a payload of 8,200 x {@code 1e131071} is over 1 GB as text):
 *       the whole statement fails ({@link #isUnprintableValue}) and, being one transaction, changes nothing.
 *       Reads then read again with the documents {@link #guardedColumns guarded} ({@link #readOne},
 *       {@link #readPage}); the claim reads its rows one by one and quarantines the one at fault.
 * </ul>
 */
final class UnreadableRows {
    private static final Logger log = LoggerFactory.getLogger(UnreadableRows.class);

    /** What reads show for a payload or result PostgreSQL cannot print: JSON null. */
    static final String UNPRINTABLE = "null";

    /**
     * Rows a page cursor fetches at a time. A job written through jobq holds about 2 MiB of documents at most
     * (a payload and a result of 1 MiB each, a little more as PostgreSQL prints them), so one fetch holds
     * some 32 MiB at worst; 500 small jobs take 32 round trips in one local transaction.
     */
    private static final int PAGE_FETCH = 16;

    private UnreadableRows() {}

    /**
     * Whether {@code e} failed because of a value in a row rather than the database: SQLSTATE class 22
     * (data exception), class 54 (program limit exceeded: "out of memory" from a text over 1 GB is
     * 54000), 53200 (out of memory) or XX000 (internal error: "invalid memory alloc request size").
     * Connection errors and conflicts are not among them, so an outage is never retried row by row.
     */
    static boolean isUnprintableValue(RuntimeException e) {
        if (StoreErrors.isUnavailable(e)) return false;
        String state = StoreErrors.sqlState(e);
        return state != null && (state.startsWith("22") || state.startsWith("54") || state.equals("53200")
                || state.equals("XX000"));
    }

    /**
     * Whether a write failed because of one row's value: {@link #isUnprintableValue}, or SQLSTATE class 23
     * (integrity constraint violation: a CHECK the row's new version breaks).
     */
    static boolean isRowFault(RuntimeException e) {
        String state = StoreErrors.sqlState(e);
        return isUnprintableValue(e) || (state != null && state.startsWith("23"));
    }

    /** One claimed row the worker will not get, and why. */
    record Quarantined(long id, int attempts, String reason) {}

    /**
     * Quarantines the given claimed rows: dead, {@code last_error} = {@code "quarantined: " + reason}. Fenced
     * like any write of a run (id, worker, attempt, running), so a row the claim did not lease is untouched.
     *
     * @return how many rows were quarantined
     */
    static int quarantine(DSLContext dsl, WorkerId worker, List<Quarantined> rows) {
        if (rows.isEmpty()) return 0;
        Long[] ids = rows.stream().map(Quarantined::id).toArray(Long[]::new);
        Integer[] attempts = rows.stream().map(Quarantined::attempts).toArray(Integer[]::new);
        String[] reasons = rows.stream()
                .map(q -> StoredText.sanitize("quarantined: " + q.reason(), JobStore.MAX_ERROR_BYTES))
                .toArray(String[]::new);
        // Fenced by q.running, not the literal, so each id is looked up by key (see OutcomeStatement); OFFSET 0
        // keeps q a subquery of its own, whose column the planner cannot see through.
        int n = dsl.query(JobqSchema.of(dsl).sql("""
                UPDATE jobq.jobs j SET state = 'dead', finished_at = now(), locked_by = NULL, locked_until = NULL,
                                  last_error = q.reason
                FROM (SELECT *, 'running'::text AS running FROM unnest({0}::bigint[], {1}::int[], {2}::text[])
                      AS q(id, attempts, reason) OFFSET 0) q
                WHERE j.id = q.id AND j.locked_by = {3} AND j.attempts = q.attempts AND j.state = q.running"""),
                ids, attempts, reasons, worker.value()).execute();
        for (Quarantined q : rows) {
            log.atWarn().addKeyValue("job", q.id()).addKeyValue("attempt", q.attempts())
                    .log("job {} quarantined as dead instead of run (attempt {}): {}", q.id(), q.attempts(), q.reason());
        }
        return n;
    }

    /**
     * A payload or result column as printed by a read that must not fail: the document itself when the
     * schema's {@code jobq_payload_problem} finds nothing wrong with it, else {@value #UNPRINTABLE}. The
     * check walks the document's numbers (microseconds for a small one), so only the fallback reads and
     * reads inside a caller's transaction (where a failed statement would abort it) pay for it.
     */
    private static Field<JSONB> guarded(JobqSchema schema, Field<JSONB> document) {
        return DSL.field(schema.sql("CASE WHEN jobq.jobq_payload_problem({0}) IS NULL THEN {0} ELSE {1}::jsonb END"),
                document.getDataType(), document, DSL.inline(UNPRINTABLE)).as(document.getName());
    }

    /** Every column of {@code jobs}, the documents {@link #guarded}: a select that cannot fail to print. */
    static List<SelectField<?>> guardedColumns(JobqSchema schema) {
        List<SelectField<?>> out = new ArrayList<>();
        for (Field<?> f : JOBS.fields()) {
            if (f.equals(JOBS.PAYLOAD)) out.add(guarded(schema, JOBS.PAYLOAD));
            else if (f.equals(JOBS.RESULT)) out.add(guarded(schema, JOBS.RESULT));
            else out.add(f);
        }
        return out;
    }

    /**
     * The job, read leniently, whatever its documents hold: a payload or result PostgreSQL cannot print is
     * shown as {@value #UNPRINTABLE} (and logged). One statement when the row prints, two when it does not.
     * For auto-commit reads only: inside a transaction the failed first statement would abort it.
     */
    static Optional<Job> readOne(DSLContext dsl, long id) {
        try {
            return dsl.selectFrom(JOBS).where(JOBS.ID.eq(id)).fetchOptional(JobRows::toJobLenient);
        } catch (RuntimeException e) {
            if (!isUnprintableValue(e)) throw e;
            log.atWarn().addKeyValue("job", id).log("job {} cannot be printed by PostgreSQL ({}); its unprintable"
                    + " payload or result is shown as {}", id, StoreErrors.serverMessage(e), UNPRINTABLE);
        }
        return dsl.select(guardedColumns(JobqSchema.of(dsl))).from(JOBS).where(JOBS.ID.eq(id)).fetchOptional(JobRows::toJobLenient);
    }

    /**
     * Up to {@code limit} jobs matching {@code where}, newest first, read leniently, ending before the job that
     * would take the page past {@link JobStore#LIST_PAGE_CHARS} (see {@link JobStore#list}). Read through a
     * cursor, {@value #PAGE_FETCH} rows at a time in a transaction of its own, so that at most one fetch of
     * rows past the end reaches this heap, not the rest of the limit. One statement when every row prints; when
     * one does not, a second one reads the page with its documents {@link #guarded}.
     */
    static List<Job> readPage(DSLContext dsl, Condition where, int limit) {
        try {
            return dsl.transactionResult(cfg -> upToPageChars(limited(cfg.dsl())
                    .selectFrom(JOBS).where(where).orderBy(JOBS.ID.desc()).limit(limit).fetchSize(PAGE_FETCH).fetchLazy()));
        } catch (RuntimeException e) {
            if (!isUnprintableValue(e)) throw e;
            log.atWarn().log("a page of jobs cannot be printed by PostgreSQL ({}); unprintable payloads and results"
                    + " are shown as {}", StoreErrors.serverMessage(e), UNPRINTABLE);
        }
        return dsl.transactionResult(cfg -> upToPageChars(limited(cfg.dsl()).select(guardedColumns(JobqSchema.of(cfg.dsl()))).from(JOBS)
                .where(where).orderBy(JOBS.ID.desc()).limit(limit).fetchSize(PAGE_FETCH).fetchLazy()));
    }

    /**
     * {@code tx} with its context's query timeout, if any, also set as the transaction's statement_timeout:
     * the driver's timer covers only a cursor's first fetch, the server's every later one as well.
     */
    private static DSLContext limited(DSLContext tx) {
        Integer seconds = tx.settings().getQueryTimeout();
        if (seconds != null && seconds > 0) tx.execute("SELECT set_config('statement_timeout', {0}, true)", seconds + "s");
        return tx;
    }

    private static List<Job> upToPageChars(Cursor<? extends Record> rows) {
        try (rows) {
            List<Job> page = new ArrayList<>();
            long chars = 0;
            for (Record r : rows) {
                Job job = JobRows.toJobLenient(r);
                chars += JobStore.listPageChars(job);
                if (!page.isEmpty() && chars > JobStore.LIST_PAGE_CHARS) break;
                page.add(job);
            }
            return page;
        }
    }
}
