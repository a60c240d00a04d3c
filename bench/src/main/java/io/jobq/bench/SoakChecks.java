package io.jobq.bench;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.stream.Collectors;
import javax.sql.DataSource;

/**
 * What the soak checks at the end, by SQL on its cluster and against what the clients were told.
 *
 * @param accepted jobs the API acknowledged (201, or 200 for a key already used)
 * @param missing acknowledged jobs not in the table (must be 0)
 * @param duplicates jobs beyond one per idempotency key, from clients sending again (must be 0; the unique index
 *     jobs_idempotency makes it so, and a resend that missed its key would have been refused, failing the run)
 * @param unacknowledged jobs in the table whose key no client saw acknowledged (must be 0: every request was sent until it was)
 * @param unfinished jobs neither done nor dead when the drain ended (lost; must be 0)
 * @param wrongEnd jobs that ended otherwise than their kind says: doomed ones dead with their error, all others done (must be 0)
 * @param doneTwice jobs recorded done more than once (must be 0)
 * @param sameAttemptTwice (job, attempt) pairs whose handler ran twice (must be 0: the fence)
 * @param doneWithoutEffect done jobs whose completing attempt left no side effect (must be 0)
 * @param reRun jobs run more than once other than by their own planned failures (at-least-once, visible)
 * @param byState final states, for the report
 */
record SoakChecks(long accepted, long missing, long duplicates, long unacknowledged, long unfinished, long wrongEnd,
                  long doneTwice, long sameAttemptTwice, long doneWithoutEffect, long reRun, Map<String, Long> byState) {

    boolean passed() {
        return missing == 0 && duplicates == 0 && unacknowledged == 0 && unfinished == 0 && wrongEnd == 0 && doneTwice == 0
                && sameAttemptTwice == 0 && doneWithoutEffect == 0;
    }

    /** Runs the checks; {@code acknowledged} maps each acknowledged job's index to the id the API answered. */
    static SoakChecks run(DataSource db, Map<Integer, Long> acknowledged) throws SQLException {
        try (Connection c = db.getConnection(); Statement st = c.createStatement()) {
            st.execute("CREATE TEMP TABLE soak_acks (idx int PRIMARY KEY, id bigint NOT NULL)");
            try (var insert = c.prepareStatement("INSERT INTO soak_acks VALUES (?, ?)")) {
                for (var e : acknowledged.entrySet()) {
                    insert.setInt(1, e.getKey());
                    insert.setLong(2, e.getValue());
                    insert.addBatch();
                }
                insert.executeBatch();
            }
            String soak = "queue = '" + SoakExperiment.QUEUE + "'";
            return new SoakChecks(acknowledged.size(),
                    count(st, "SELECT count(*) FROM soak_acks a WHERE NOT EXISTS (SELECT 1 FROM jobq.jobs j WHERE j.id = a.id "
                            + "AND j.idempotency_key = 'soak-' || a.idx)"),
                    count(st, "SELECT count(*) - count(DISTINCT (tenant, idempotency_key)) FROM jobq.jobs WHERE " + soak),
                    count(st, "SELECT count(*) FROM jobq.jobs j WHERE " + soak + " AND NOT EXISTS (SELECT 1 FROM soak_acks a WHERE a.id = j.id)"),
                    count(st, "SELECT count(*) FROM jobq.jobs WHERE " + soak + " AND state NOT IN ('done', 'dead')"),
                    count(st, "SELECT count(*) FROM jobq.jobs WHERE " + soak + " AND state IN ('done', 'dead') AND CASE WHEN task = '"
                            + ChaosHandlers.DOOMED + "' THEN state <> 'dead' OR coalesce(last_error, '') NOT LIKE '%doomed job%' ELSE state <> 'done' END"),
                    count(st, "SELECT count(*) FROM (SELECT job_id FROM public.bench_done_log GROUP BY job_id HAVING count(*) > 1) x"),
                    count(st, "SELECT count(*) FROM (SELECT 1 FROM public.bench_effects GROUP BY job_id, attempt HAVING count(*) > 1) x"),
                    count(st, "SELECT count(*) FROM jobq.jobs j WHERE " + soak + " AND j.state = 'done' AND NOT EXISTS "
                            + "(SELECT 1 FROM public.bench_effects e WHERE e.job_id = j.id AND e.attempt = j.attempts)"),
                    count(st, "SELECT count(*) FROM jobq.jobs WHERE " + soak + " AND task IN ('" + ChaosHandlers.FAST + "', '"
                            + ChaosHandlers.SLOW + "') AND attempts > 1"),
                    byState(st));
        }
    }

    private static long count(Statement st, String sql) throws SQLException {
        try (ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static Map<String, Long> byState(Statement st) throws SQLException {
        Map<String, Long> out = new java.util.TreeMap<>();
        try (ResultSet rs = st.executeQuery("SELECT task || ' ' || state, count(*) FROM jobq.jobs WHERE queue = '"
                + SoakExperiment.QUEUE + "' GROUP BY 1")) {
            while (rs.next()) out.put(rs.getString(1), rs.getLong(2));
        }
        return out;
    }

    /** The figures, one per line, each check marked. */
    String render() {
        return String.join("\n",
                line("accepted by the API (acknowledged to a client)", accepted, true),
                line("acknowledged but missing", missing, missing == 0),
                line("duplicates from clients sending again", duplicates, duplicates == 0),
                line("in the table but never acknowledged", unacknowledged, unacknowledged == 0),
                line("lost (neither done nor dead after the drain)", unfinished, unfinished == 0),
                line("ended otherwise than their kind says", wrongEnd, wrongEnd == 0),
                line("recorded done twice", doneTwice, doneTwice == 0),
                line("(job, attempt) pairs run twice", sameAttemptTwice, sameAttemptTwice == 0),
                line("done without the completing attempt's side effect", doneWithoutEffect, doneWithoutEffect == 0),
                line("fast or slow jobs run more than once (recovered after a fault)", reRun, true),
                "  final states by task: " + byState.entrySet().stream().map(e -> e.getKey() + " " + e.getValue())
                        .collect(Collectors.joining(", ")));
    }

    private static String line(String what, long n, boolean ok) {
        return String.format("  %-62s %8s  %s", what, Format.count(n), ok ? "ok" : "FAILED");
    }
}
