package io.jobq.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.jobq.application.port.JobStore;
import io.jobq.application.port.JobStoreContract;
import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The port's whole contract through connections that speak PostgreSQL's simple query protocol
 * ({@code preferQueryMode=simple} in the JDBC URL, as some pooler set-ups ask for): pgjdbc then inlines
 * every bind value into the text and sends multi-statement texts (outcomes then claim) as one query
 * string. Nothing of jobq may depend on server-side prepared statements or on the extended protocol.
 */
@ExtendWith(PostgresDatabaseExtension.class)
class SimpleQueryModeContractTest extends JobStoreContract {
    TestDatabase db;
    HikariDataSource simple;
    PostgresJobStore store;

    @BeforeEach
    void setUp(TestDatabase db) {
        this.db = db;
        db.emptyTables();
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(db.jdbcUrl() + (db.jdbcUrl().contains("?") ? "&" : "?") + "preferQueryMode=simple");
        config.setMaximumPoolSize(4);
        simple = new HikariDataSource(config);
        store = new PostgresJobStore(simple);
    }

    @AfterEach
    void closePool() {
        simple.close();
    }

    /** Without this, a URL the driver ignored would pass every test above on the extended protocol. */
    @Test
    void theConnectionsReallyUseTheSimpleProtocol() throws Exception {
        try (var c = simple.getConnection()) {
            assertThat(c.unwrap(org.postgresql.PGConnection.class).getPreferQueryMode())
                    .isEqualTo(org.postgresql.jdbc.PreferQueryMode.SIMPLE);
        }
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
