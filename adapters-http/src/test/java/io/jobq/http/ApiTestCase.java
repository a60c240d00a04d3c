package io.jobq.http;

import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Base of the API tests over the real store: one {@link ApiFixture} (real server on a random port,
 * real PostgreSQL, a fresh database per class) started once per class and emptied before each test.
 * A subclass's own {@code @BeforeAll}/{@code @BeforeEach} run after these (give them other names:
 * a method of the same name would replace the base's).
 */
@ExtendWith(PostgresDatabaseExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class ApiTestCase {
    ApiFixture f;

    /** The server's settings; override for e.g. gauges refreshed on every scrape. */
    HttpSettings settings() {
        return HttpSettings.DEFAULTS;
    }

    @BeforeAll
    void startApi(TestDatabase db) {
        f = ApiFixture.start(db, settings());
    }

    @AfterAll
    void stopApi() {
        f.close();
    }

    @BeforeEach
    void emptyTables() {
        f.reset();
    }

    /** JSON written with ' for " so test tables stay readable. */
    static String j(String singleQuoted) {
        return singleQuoted.replace('\'', '"');
    }
}
