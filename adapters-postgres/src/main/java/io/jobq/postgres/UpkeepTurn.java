package io.jobq.postgres;

import io.jobq.domain.lease.WorkerId;
import java.time.Duration;
import org.jooq.DSLContext;
import org.jooq.impl.SQLDataType;

import static org.jooq.impl.DSL.val;

/**
 * The {@code upkeep_turn} row (schema V12): which worker ran the queue's upkeep last, and when, so that
 * N workers make about one upkeep pass a period between them instead of N.
 */
final class UpkeepTurn {
    /**
     * One autocommit statement: the turn is taken (the row written) only if the last one is at least the gap
     * old by the server's clock, or lies in the future (a clock set back, a hand edit). "The future" is read
     * from {@code clock_timestamp()}, not {@code now()}: an asker that waited for the row lock re-checks the
     * winner's row, whose time is after its own transaction's start though not after the present, and must
     * lose. A loser changes nothing; the row lock it takes or waits for lasts only this statement. A missing
     * row (a hand delete) is inserted, so it cannot stop upkeep.
     */
    private static final String TAKE = """
            INSERT INTO jobq.upkeep_turn AS u (id, taken_by, taken_at) VALUES (true, {0}, now())
            ON CONFLICT (id) DO UPDATE SET taken_by = excluded.taken_by, taken_at = excluded.taken_at
            WHERE u.taken_at <= now() - {1} * interval '1 millisecond' OR u.taken_at > clock_timestamp()
            RETURNING true""";

    private UpkeepTurn() {}

    /** @return whether {@code worker} took the turn */
    static boolean take(DSLContext dsl, WorkerId worker, Duration gap) {
        return !dsl.resultQuery(JobqSchema.of(dsl).sql(TAKE), worker.value(), val(gap.toMillis(), SQLDataType.BIGINT))
                .fetch().isEmpty();
    }
}
