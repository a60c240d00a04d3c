package io.jobq.postgres;

import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Base of the tests of the PostgreSQL store: the class's own database ({@link PostgresDatabaseExtension}),
 * emptied before each test, and a new {@link PostgresJobStore} on it. A subclass's own
 * {@code @BeforeEach} runs after this one (give it another name: one of the same name would replace it).
 */
@ExtendWith(PostgresDatabaseExtension.class)
abstract class PostgresStoreTestCase {
    TestDatabase db;
    PostgresJobStore store;

    @BeforeEach
    void emptyStore(TestDatabase db) {
        this.db = db;
        store = emptied(db);
    }

    /**
     * For store tests that cannot extend this class (the port's contract has its own base).
     *
     * @return a new store on {@code db}, whose tables have just been emptied
     */
    static PostgresJobStore emptied(TestDatabase db) {
        db.emptyTables();
        return new PostgresJobStore(db.dataSource());
    }
}
