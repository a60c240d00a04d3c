package io.jobq.postgres;

import static io.jobq.postgres.StoreFixtures.W1;
import static io.jobq.postgres.StoreFixtures.claim;
import static io.jobq.postgres.StoreFixtures.job;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import io.jobq.application.port.FencedWrite;
import io.jobq.application.port.OutcomeWrite;
import io.jobq.application.port.OutcomesThenClaim;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobState;
import io.jobq.domain.retry.RetryDecision;
import io.jobq.postgres.testing.JdbcProxies;
import io.jobq.postgres.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * {@link PostgresJobStore#recordOutcomesThenClaim} on a real server: one transaction writes the outcomes, each
 * fenced on its own, and claims; a value the database refuses falls back to two calls; and the claim and
 * the outcome statement before it settle on PostgreSQL's cached generic plan instead of being planned per execution.
 */
class OutcomesThenClaimTest extends PostgresStoreTestCase {

    static OutcomeWrite done(Job j) {
        return new OutcomeWrite.Complete(j.fencingToken(), Optional.empty(), Optional.of(Duration.ofMillis(3)));
    }

    @Test
    void writesEachOutcomeFencedAndClaimsTheNextJobsInOneTransaction() {
        for (int i = 0; i < 6; i++) store.enqueue(job("acme"));
        List<Job> running = store.claim(claim(W1, 3));
        Job stale = running.get(2);
        // its run is reaped and claimed again meanwhile: the old token must change nothing
        db.execute("UPDATE jobs SET attempts = attempts + 1 WHERE id = {0}", stale.id().value());
        StatementCounter counter = new StatementCounter();
        PostgresJobStore counted = new PostgresJobStore(counter.wrap(db.dataSource()));

        OutcomesThenClaim both = counted.recordOutcomesThenClaim(List.of(done(running.get(0)),
                new OutcomeWrite.Fail(running.get(1).fencingToken(), "boom", new RetryDecision.RetryAfter(Duration.ofMinutes(1)),
                        Optional.empty()), done(stale)), claim(W1, 2));

        // the one text (the lock-wait bound, the outcomes, the claim, the commit), and one read of the row that
        // refused its stale write (a refusal carries the row)
        assertThat(counter.count()).as("statements sent").isEqualTo(2);
        assertThat(both.answers()).hasSize(3);
        assertThat(both.answers().get(0)).isInstanceOfSatisfying(FencedWrite.Applied.class,
                a -> assertThat(a.job().state()).isEqualTo(JobState.DONE));
        assertThat(both.answers().get(1)).isInstanceOfSatisfying(FencedWrite.Applied.class,
                a -> assertThat(a.job().state()).isEqualTo(JobState.SCHEDULED));
        assertThat(both.answers().get(2)).isInstanceOfSatisfying(FencedWrite.Rejected.class,
                r -> assertThat(r.current()).hasValueSatisfying(j -> assertThat(j.state()).isEqualTo(JobState.RUNNING)));
        assertThat(store.get(stale.id()).orElseThrow().attempts()).as("the stale write changed nothing").isEqualTo(2);
        assertThat(both.claimed()).hasSize(2).allSatisfy(j -> {
            assertThat(j.state()).isEqualTo(JobState.RUNNING);
            assertThat(j.attempts()).isEqualTo(1);
        });
        assertThat(both.claimed()).extracting(Job::id).doesNotContainAnyElementsOf(running.stream().map(Job::id).toList());
        assertThat(both.claimed().get(0).vtime().orElseThrow()).isLessThanOrEqualTo(both.claimed().get(1).vtime().orElseThrow());
    }

    /**
     * A claim that waits on row locks must not wait holding the ending runs' locks (the heartbeat needs them):
     * under {@link LockMode#WAIT} the store writes the outcomes and then claims, two statements.
     */
    @Test
    void whereTheClaimWaitsOnLocksTheOutcomesAreCommittedFirstInAStatementOfTheirOwn() {
        for (int i = 0; i < 3; i++) store.enqueue(job("acme"));
        Job run = store.claim(claim(W1, 1)).getFirst();
        StatementCounter counter = new StatementCounter();
        PostgresJobStore waiting = new PostgresJobStore(counter.wrap(db.dataSource()),
                PostgresJobStore.Options.DEFAULTS.withLockMode(LockMode.WAIT));

        OutcomesThenClaim both = waiting.recordOutcomesThenClaim(List.of(done(run)), claim(W1, 2));

        assertThat(counter.count()).as("statements sent").isEqualTo(2);
        assertThat(both.answers()).singleElement().isInstanceOf(FencedWrite.Applied.class);
        // and a worker on it has a writer thread write the outcomes, beside the claims (OutcomeWriter)
        assertThat(waiting.claimsCarryOutcomes()).isFalse();
        assertThat(store.claimsCarryOutcomes()).isTrue();
        assertThat(both.claimed()).hasSize(2);
    }

    /**
     * The text commits before the store answers the writes it left out: a row that cannot be read again then
     * (here every statement after the text fails, as on a connection lost at that moment) is answered
     * {@link FencedWrite.Held}, written again later under its fence, and the writes applied beside it and the
     * claim are still reported, not failed with it. Run without that rule, the call throws though its outcome
     * and its claim committed.
     */
    @Test
    void aWriteLeftOutWhoseRowCannotBeReadAgainIsAnsweredHeldAndTheRestReported() {
        for (int i = 0; i < 3; i++) store.enqueue(job("acme"));
        List<Job> running = store.claim(claim(W1, 2));
        Job stale = running.get(1);
        db.execute("UPDATE jobs SET attempts = attempts + 1 WHERE id = {0}", stale.id().value());
        java.util.concurrent.atomic.AtomicBoolean committed = new java.util.concurrent.atomic.AtomicBoolean();
        DataSource failingAfterTheText = JdbcProxies.afterEachCall(DataSource.class, db.dataSource(), (method, args, result) ->
                !method.getName().equals("getConnection") ? result : JdbcProxies.afterEachCall(Connection.class, (Connection) result, (m, a, made) -> {
                    if (!m.getName().equals("prepareStatement") || !(a[0] instanceof String sql)) return made;
                    if (committed.get()) {
                        ((PreparedStatement) made).close();
                        throw new java.sql.SQLException("connection lost (test)", "08006");
                    }
                    if (sql.endsWith("COMMIT")) committed.set(true);
                    return made;
                }));

        OutcomesThenClaim both = new PostgresJobStore(failingAfterTheText)
                .recordOutcomesThenClaim(List.of(done(running.get(0)), done(stale)), claim(W1, 1));

        assertThat(committed).as("the text was sent").isTrue();
        assertThat(both.answers().get(0)).isInstanceOfSatisfying(FencedWrite.Applied.class,
                a -> assertThat(a.job().state()).isEqualTo(JobState.DONE));
        assertThat(both.answers().get(1)).isEqualTo(new FencedWrite.Held(stale.fencingToken()));
        assertThat(both.claimed()).singleElement().satisfies(j -> assertThat(store.get(j.id()).orElseThrow().lockedBy())
                .hasValue(W1));
        assertThat(store.recordOutcomes(List.of(done(stale)))).as("written again, the fence decides").singleElement()
                .isInstanceOf(FencedWrite.Rejected.class);
    }

    /**
     * An ending run's row held elsewhere (as an application's open transaction cancelling the job holds it)
     * holds back neither the other outcomes nor the claim for longer than {@link LockWait#MAX_MS}: the held
     * write is answered {@link FencedWrite.Held}, the rest are written, and the held one is written once the
     * holder is done. Run against the variant whose wait is unbounded (no {@code lock_timeout}), the call waits
     * for the holder.
     */
    @Test
    void anEndingRunsRowHeldElsewhereHoldsBackNeitherTheOtherOutcomesNorTheClaim() throws Exception {
        for (int i = 0; i < 5; i++) store.enqueue(job("acme"));
        List<Job> runs = store.claim(claim(W1, 3));
        Job held = runs.get(0);
        Job other = runs.get(1);
        Job heldForTheWrongVariant = runs.get(2);
        AtomicInteger rewritten = new AtomicInteger();
        PostgresJobStore waiting = new PostgresJobStore(waitingFence(db.dataSource(), rewritten));
        try (Connection holder = db.dataSource().getConnection(); Connection looker = db.dataSource().getConnection()) {
            holder.setAutoCommit(false);
            try (var ps = holder.prepareStatement("SELECT 1 FROM jobq.jobs WHERE id = ANY(?) FOR NO KEY UPDATE")) {
                ps.setArray(1, holder.createArrayOf("bigint", new Long[] {held.id().value(), heldForTheWrongVariant.id().value()}));
                ps.executeQuery().close();
            }
            var call = new java.util.concurrent.FutureTask<>(() -> store.recordOutcomesThenClaim(List.of(done(held), done(other)), claim(W1, 1)));
            Thread.ofPlatform().daemon().name("outcomes-then-claim").start(call);
            OutcomesThenClaim both = call.get(10, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(both.answers().get(0)).isEqualTo(new FencedWrite.Held(held.fencingToken()));
            assertThat(both.answers().get(1)).isInstanceOfSatisfying(FencedWrite.Applied.class,
                    a -> assertThat(a.job().state()).isEqualTo(JobState.DONE));
            assertThat(both.claimed()).hasSize(1);
            assertThat(store.get(held.id()).orElseThrow().state()).as("the held run's row unchanged").isEqualTo(JobState.RUNNING);

            var waited = new java.util.concurrent.FutureTask<>(() -> waiting.recordOutcomesThenClaim(List.of(done(heldForTheWrongVariant)),
                    claim(W1, 1)));
            Thread.ofPlatform().daemon().name("waiting-variant").start(waited);
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (!TestDatabase.blocksAnother(looker, TestDatabase.backendPid(holder))) {
                assertThat(System.nanoTime()).as("the waiting variant waits for the held row").isLessThan(deadline);
                Thread.sleep(10);
            }
            assertThat(waited.isDone()).isFalse();
            holder.commit();
            assertThat(waited.get(10, java.util.concurrent.TimeUnit.SECONDS).answers()).singleElement().matches(FencedWrite::applied);
            assertThat(rewritten.get()).as("texts rewritten to wait").isEqualTo(1);
        }
        assertThat(store.recordOutcomes(List.of(done(held)))).as("written again once the holder is done").singleElement()
                .isInstanceOfSatisfying(FencedWrite.Applied.class, a -> assertThat(a.job().state()).isEqualTo(JobState.DONE));
    }

    /**
     * {@code target} with the transaction's lock-wait bound set on a setting nobody reads, so that the outcome
     * statement waits for a held row as long as it is held: the deliberately wrong variant. Counts the texts it
     * rewrote in {@code rewritten}, so a test sees that it did.
     */
    private static DataSource waitingFence(DataSource target, AtomicInteger rewritten) {
        return rewriting(target, rewritten, sql -> sql.replace("SET LOCAL lock_timeout", "SET LOCAL jobq.unbounded_test"));
    }

    /**
     * {@code target} with the outcome statement's fence skipping a held row at once instead of waiting for it
     * a moment: the deliberately wrong variant of {@link #aRowHeldForAMomentIsWaitedFor}.
     */
    private static DataSource skippingFence(DataSource target, AtomicInteger rewritten) {
        return rewriting(target, rewritten, sql -> sql.replaceAll("ORDER BY j\\.id\\s+FOR NO KEY UPDATE OF j\\b", "FOR NO KEY UPDATE OF j SKIP LOCKED"));
    }

    /** {@code target}, its prepared texts rewritten by {@code rewrite}; counts in {@code rewritten} those it changed. */
    private static DataSource rewriting(DataSource target, AtomicInteger rewritten, java.util.function.UnaryOperator<String> rewrite) {
        return JdbcProxies.afterEachCall(DataSource.class, target, (method, args, result) -> method.getName().equals("getConnection")
                ? JdbcProxies.afterEachCall(Connection.class, (Connection) result, (m, a, made) -> {
                    if (!m.getName().equals("prepareStatement") || !(a[0] instanceof String sql) || rewrite.apply(sql).equals(sql)) {
                        return made;
                    }
                    ((PreparedStatement) made).close();
                    rewritten.incrementAndGet();
                    return ((Connection) result).prepareStatement(rewrite.apply(sql));
                })
                : result);
    }

    /**
     * A row held for a moment (here by a transaction that commits as soon as the write waits for it; in a busy worker, a claim that
     * re-checked the row and found it claimed already, until its commit) is waited for, and its outcome written
     * in the same call. Run against the variant that skips at once, the write comes back held.
     */
    @Test
    void aRowHeldForAMomentIsWaitedFor() throws Exception {
        // A long bound: the holder sees the wait and commits within it however loaded the machine.
        assertThat(heldForAMoment(new PostgresJobStore(db.dataSource()).withOutcomeLockWait(Duration.ofSeconds(10))))
                .isInstanceOf(FencedWrite.Applied.class);
        AtomicInteger rewritten = new AtomicInteger();
        assertThat(heldForAMoment(new PostgresJobStore(skippingFence(db.dataSource(), rewritten)))).isInstanceOf(FencedWrite.Held.class);
        assertThat(rewritten.get()).as("texts rewritten to skip").isPositive();
    }

    /** The answer to a run's outcome written while its row is held, by a transaction that commits once the write waits. */
    private FencedWrite heldForAMoment(PostgresJobStore on) throws Exception {
        db.emptyTables();
        for (int i = 0; i < 2; i++) store.enqueue(job("acme"));
        Job run = store.claim(claim(W1, 1)).getFirst();
        try (Connection holder = db.newConnection(); Connection looker = db.newConnection()) {
            holder.setAutoCommit(false);
            try (var ps = holder.prepareStatement("SELECT 1 FROM jobq.jobs WHERE id = ? FOR NO KEY UPDATE")) {
                ps.setLong(1, run.id().value());
                ps.executeQuery().close();
            }
            var call = new java.util.concurrent.FutureTask<>(() -> on.recordOutcomesThenClaim(List.of(done(run)), claim(W1, 1)));
            Thread.ofPlatform().daemon().name("outcomes-then-claim").start(call);
            // Commit once the call waits, or once it is over (the skipping variant never waits).
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (!call.isDone() && !TestDatabase.blocksAnother(looker, TestDatabase.backendPid(holder))) {
                assertThat(System.nanoTime()).as("the call neither waited nor ended").isLessThan(deadline);
                Thread.sleep(2);
            }
            holder.commit();
            return call.get(10, java.util.concurrent.TimeUnit.SECONDS).answers().getFirst();
        }
    }

    /**
     * A write answered held is remembered: made again while the row is still held, its flush skips held rows at
     * once rather than waiting again, so a row an application keeps holds back the outcomes beside it once, not
     * each time it is written again. Seen in the texts sent: no lock-wait bound the second time.
     */
    @Test
    void aWriteFoundHeldSkipsAtOnceWhenMadeAgain() throws Exception {
        for (int i = 0; i < 4; i++) store.enqueue(job("acme"));
        List<Job> runs = store.claim(claim(W1, 2));
        StatementCounter counter = new StatementCounter();
        PostgresJobStore counted = new PostgresJobStore(counter.wrap(db.dataSource()));
        try (Connection holder = db.newConnection()) {
            holder.setAutoCommit(false);
            try (var ps = holder.prepareStatement("SELECT 1 FROM jobq.jobs WHERE id = ? FOR NO KEY UPDATE")) {
                ps.setLong(1, runs.get(0).id().value());
                ps.executeQuery().close();
            }
            assertThat(counted.recordOutcomesThenClaim(List.of(done(runs.get(0))), claim(W1, 1)).answers())
                    .singleElement().isInstanceOf(FencedWrite.Held.class);
            assertThat(counter.textsWith("lock_timeout")).as("the first flush waited, bounded").isEqualTo(1);
            OutcomesThenClaim again = counted.recordOutcomesThenClaim(List.of(done(runs.get(0)), done(runs.get(1))), claim(W1, 1));
            assertThat(again.answers().get(0)).isInstanceOf(FencedWrite.Held.class);
            assertThat(again.answers().get(1)).isInstanceOf(FencedWrite.Applied.class);
            assertThat(counter.textsWith("lock_timeout")).as("made again, it waited no more").isEqualTo(1);
            holder.commit();
        }
        assertThat(new PostgresJobStore(db.dataSource()).recordOutcomesThenClaim(List.of(done(runs.get(0))), claim(W1, 1)).answers())
                .singleElement().isInstanceOf(FencedWrite.Applied.class);
    }

    /**
     * The outcomes and the claim commit together or not at all, also once pgjdbc has prepared and described the
     * statements on a connection (from their 5th execution it may send a Sync between two statements of one
     * text, which in auto-commit would commit the outcomes on their own). Here the claim fails on the server
     * after the outcome statement ran (a check the claimed rows break): the outcome must be rolled back with it.
     */
    @Test
    void aClaimThatFailsTakesTheOutcomesWithItEvenOnAWarmConnection() throws Exception {
        for (int i = 0; i < 30; i++) store.enqueue(job("acme"));
        try (HikariDataSource one = db.newPool(1, "TRANSACTION_READ_COMMITTED")) {
            PostgresJobStore onOneConnection = new PostgresJobStore(one);
            Job held = onOneConnection.claim(claim(W1, 1)).getFirst();
            for (int i = 0; i < 12; i++) {
                held = onOneConnection.recordOutcomesThenClaim(List.of(done(held)), claim(W1, 1)).claimed().getFirst();
            }
            db.execute("ALTER TABLE jobs ADD CONSTRAINT nothing_more_claimed CHECK (state <> 'running') NOT VALID");
            Job last = held;
            try {
                assertThatThrownBy(() -> onOneConnection.recordOutcomesThenClaim(List.of(done(last)), claim(W1, 1)))
                        .hasMessageContaining("nothing_more_claimed");
            } finally {
                db.execute("ALTER TABLE jobs DROP CONSTRAINT nothing_more_claimed");
            }

            assertThat(store.get(last.id()).orElseThrow().state()).as("the outcome, written before the claim failed")
                    .isEqualTo(JobState.RUNNING);
        }
    }

    @Test
    void aResultTheDatabaseRefusesIsStoredWithoutItAndTheClaimStillComesBack() {
        for (int i = 0; i < 3; i++) store.enqueue(job("acme"));
        Job run = store.claim(claim(W1, 1)).getFirst();
        // jsonb cannot hold a number beyond numeric's range: the outcome statement fails on it and nothing changed
        OutcomeWrite refused = new OutcomeWrite.Complete(run.fencingToken(), Optional.of("{\"n\": 1e-20000}"), Optional.empty());

        OutcomesThenClaim both = store.recordOutcomesThenClaim(List.of(refused), claim(W1, 2));

        assertThat(both.answers()).singleElement().isInstanceOfSatisfying(FencedWrite.Applied.class, a -> {
            assertThat(a.job().state()).isEqualTo(JobState.DONE);
            assertThat(a.job().lastError()).hasValueSatisfying(e -> assertThat(e).startsWith("result not stored"));
        });
        assertThat(both.claimed()).hasSize(2);
    }

    @Test
    void noOutcomesIsAPlainClaim() {
        store.enqueue(job("acme"));
        OutcomesThenClaim both = store.recordOutcomesThenClaim(List.of(), claim(W1, 5));
        assertThat(both.answers()).isEmpty();
        assertThat(both.claimed()).hasSize(1);
    }

    /**
     * With the limit in the text, the sixth execution on a connection uses PostgreSQL's cached generic plan
     * ({@code pg_prepared_statements.generic_plans}); the same claim with its limit bound as a parameter (the
     * variant jobq had) is planned afresh every time, because its generic plan must guess the pick's size.
     * So is the outcome statement before it, in its form for one outcome (a batch of one over {@code unnest}
     * of an array parameter, which the planner guesses at 10 rows, was planned afresh every time).
     */
    @Test
    void theClaimAndOutcomesThenClaimSettleOnACachedGenericPlan() throws Exception {
        // a queue the size of the bench's: on a small table even the guessing generic plan looks cheap
        store.enqueue(job("acme"));
        db.execute("""
                INSERT INTO jobs (queue, tenant, task, state, vtime)
                SELECT 'default', 'acme', 'noop', 'queued', g FROM generate_series(1, 20000) g""");
        db.execute("ANALYZE jobs");
        try (HikariDataSource one = db.newPool(1, "TRANSACTION_READ_COMMITTED")) {
            PostgresJobStore onOneConnection = new PostgresJobStore(one);
            Job held = onOneConnection.claim(claim(W1, 1)).getFirst();
            // pgjdbc prepares on the server from a statement's 5th execution; PostgreSQL then plans its first 5
            // executions each and from the 6th may use the generic plan: 20 executions leave 10 to see it
            for (int i = 0; i < 20; i++) {
                held = onOneConnection.recordOutcomesThenClaim(List.of(done(held)), claim(W1, 1)).claimed().getFirst();
            }
            for (int i = 0; i < 20; i++) onOneConnection.claim(claim(W1, 1));
            String boundLimit = """
                    WITH picked AS MATERIALIZED (SELECT id FROM jobq.jobs WHERE state = 'queued' AND queue = ?
                        ORDER BY vtime, id LIMIT ? FOR UPDATE SKIP LOCKED)
                    UPDATE jobq.jobs j SET state = 'running', attempts = j.attempts + 1, locked_by = ?,
                        locked_until = now() + interval '30 seconds', started_at = now()
                    FROM picked WHERE j.id = picked.id RETURNING j.*""";
            try (var c = one.getConnection()) {
                for (int i = 0; i < 20; i++) {
                    try (var ps = c.prepareStatement(boundLimit)) {
                        ps.setString(1, "default");
                        ps.setInt(2, 1);
                        ps.setString(3, "w2");
                        ps.executeQuery().close();
                    }
                }
                try (var ps = c.prepareStatement("SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements");
                     var rs = ps.executeQuery()) {
                    long outcomesGeneric = -1, boundGeneric = -1, boundCustom = -1;
                    List<Long> claimGeneric = new java.util.ArrayList<>();
                    while (rs.next()) {
                        String sql = rs.getString(1);
                        // the outcome statement, here its form for one outcome (see OutcomeStatement.update)
                        if (sql.contains("[1] AS id")) outcomesGeneric = rs.getLong(2);
                        else if (sql.contains("LIMIT $")) {
                            boundGeneric = rs.getLong(2);
                            boundCustom = rs.getLong(3);
                        } else if (sql.contains("picked AS MATERIALIZED")) claimGeneric.add(rs.getLong(2));
                    }
                    assertThat(outcomesGeneric).as("executions of the outcomes before a claim on the generic plan").isGreaterThanOrEqualTo(10);
                    // pgjdbc prepares each statement of a text on its own: the claim alone, and the one after the outcomes
                    assertThat(claimGeneric).as("claim executions on the generic plan, alone and after the outcomes").hasSize(2)
                            .allSatisfy(generic -> assertThat(generic).isGreaterThanOrEqualTo(10));
                    assertThat(boundGeneric).as("the bound-limit claim on the generic plan").isZero();
                    assertThat(boundCustom).as("the bound-limit claim planned per execution").isGreaterThanOrEqualTo(15);
                }
            }
        }
    }

    /** Counts the statements prepared on a DataSource's connections. */
    static final class StatementCounter {
        private final AtomicInteger prepared = new AtomicInteger();
        private final java.util.Queue<String> texts = new java.util.concurrent.ConcurrentLinkedQueue<>();

        DataSource wrap(DataSource target) {
            return JdbcProxies.afterEachCall(DataSource.class, target, (method, args, result) ->
                    method.getName().equals("getConnection") ? connection((Connection) result) : result);
        }

        private Connection connection(Connection target) {
            return JdbcProxies.afterEachCall(Connection.class, target, (method, args, result) -> {
                if (method.getName().startsWith("prepare") || method.getName().equals("createStatement")) prepared.incrementAndGet();
                if (method.getName().startsWith("prepare") && args[0] instanceof String sql) texts.add(sql);
                return result;
            });
        }

        int count() {
            return prepared.get();
        }

        /** How many of the texts prepared so far contain {@code part}. */
        long textsWith(String part) {
            return texts.stream().filter(t -> t.contains(part)).count();
        }
    }
}
