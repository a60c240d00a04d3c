package io.jobq.http;

import io.jobq.postgres.PostgresJobStore;
import io.jobq.postgres.testing.TestDatabase;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

/**
 * A running API on a random port over a real {@link PostgresJobStore} on the test class's database.
 * Close it in {@code @AfterAll}.
 */
record ApiFixture(TestDatabase db, PostgresJobStore store, PrometheusMeterRegistry registry, HttpApi api, ApiClient client)
        implements AutoCloseable {

    static ApiFixture start(TestDatabase db) {
        return start(db, HttpSettings.DEFAULTS);
    }

    static ApiFixture start(TestDatabase db, HttpSettings settings) {
        PostgresJobStore store = new PostgresJobStore(db.dataSource());
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        HttpApi api = HttpApi.create(store, registry, settings).start(0);
        return new ApiFixture(db, store, registry, api, new ApiClient(api.port()));
    }

    /** Empties the tables between tests. */
    void reset() {
        db.emptyTables();
    }

    long count(String where) {
        return db.dsl().resultQuery("SELECT count(*) FROM jobs WHERE " + where).fetchSingle(0, Long.class);
    }

    long jobCount() {
        return count("true");
    }

    @Override
    public void close() {
        api.stop();
    }
}
