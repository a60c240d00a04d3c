package io.jobq.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.jobq.application.port.JobStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The port's whole contract through connections that speak PostgreSQL's simple query protocol
 * ({@code preferQueryMode=simple} in the JDBC URL, as some pooler set-ups ask for): pgjdbc then inlines
 * every bind value into the text and sends multi-statement texts (outcomes then claim) as one query
 * string. Nothing of jobq may depend on server-side prepared statements or on the extended protocol.
 * Set-up, clock and time travel are {@link PostgresJobStoreContractTest}'s; only the store differs.
 */
class SimpleQueryModeContractTest extends PostgresJobStoreContractTest {
    HikariDataSource simple;
    PostgresJobStore simpleStore;

    /** After the base class's set-up (which empties the tables); named apart so it does not replace it. */
    @BeforeEach
    void openSimpleProtocolPool() {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(db.jdbcUrl() + (db.jdbcUrl().contains("?") ? "&" : "?") + "preferQueryMode=simple");
        config.setMaximumPoolSize(4);
        simple = new HikariDataSource(config);
        simpleStore = new PostgresJobStore(simple);
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
        return simpleStore;
    }
}
