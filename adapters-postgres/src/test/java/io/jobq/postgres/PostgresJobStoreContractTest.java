package io.jobq.postgres;

import io.jobq.application.port.JobStore;
import io.jobq.application.port.JobStoreContract;
import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The port's contract on a real server: the reference the in-memory fake is held to. Time cannot be
 * moved for {@code now()}, so it is moved for the rows instead: every stored instant is shifted back.
 */
@ExtendWith(PostgresDatabaseExtension.class)
class PostgresJobStoreContractTest extends JobStoreContract {
    TestDatabase db;
    PostgresJobStore store;

    @BeforeEach
    void setUp(TestDatabase db) {
        this.db = db;
        // the database is the class's, shared by every test of the contract
        store = PostgresStoreTestCase.emptied(db);
    }

    @Override
    protected JobStore store() {
        return store;
    }

    @Override
    protected Instant storeNow() {
        return db.dsl().resultQuery("SELECT now()").fetchSingle(0, OffsetDateTime.class).toInstant();
    }

    @Override
    protected void advanceTime(Duration by) {
        db.execute("""
                UPDATE jobs SET run_at = run_at - {0}, locked_until = locked_until - {0}, created_at = created_at - {0},
                    started_at = started_at - {0}, finished_at = finished_at - {0}""",
                org.jooq.impl.DSL.field("{0}::bigint * interval '1 millisecond'", Object.class, by.toMillis()));
        db.execute("UPDATE workers SET last_seen = last_seen - {0}, started_at = started_at - {0}",
                org.jooq.impl.DSL.field("{0}::bigint * interval '1 millisecond'", Object.class, by.toMillis()));
    }
}
