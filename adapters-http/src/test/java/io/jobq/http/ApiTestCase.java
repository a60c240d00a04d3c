package io.jobq.http;

import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Base of the API tests that need nothing but the server: one {@link ApiFixture} (real server on a
 * random port, real PostgreSQL, a fresh database per class) started once per class and emptied
 * before each test.
 */
@ExtendWith(PostgresDatabaseExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class ApiTestCase {
    ApiFixture f;

    @BeforeAll
    void start(TestDatabase db) {
        f = ApiFixture.start(db);
    }

    @AfterAll
    void stop() {
        f.close();
    }

    @BeforeEach
    void reset() {
        f.reset();
    }

    /** JSON written with ' for " so test tables stay readable. */
    static String j(String singleQuoted) {
        return singleQuoted.replace('\'', '"');
    }
}
