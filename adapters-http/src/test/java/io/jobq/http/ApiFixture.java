package io.jobq.http;

import io.jobq.application.port.JobStore;
import io.jobq.postgres.PostgresJobStore;
import io.jobq.postgres.testing.TestDatabase;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

/**
 * A running API on a random port with its own Prometheus registry and a real {@link ApiClient}: the
 * one way every HTTP test starts a server. Usually over a real {@link PostgresJobStore} on the test
 * class's database; {@link #start(TestDatabase, JobStore, HttpSettings)} takes any store (a fake that
 * throws, a store behind a serializable pool or an unreachable one). Close it when done.
 *
 * @param db the test database, or null when the store has none of its own ({@link #reset} and
 *     {@link #count} then do not apply)
 */
record ApiFixture(TestDatabase db, JobStore store, PrometheusMeterRegistry registry, HttpApi api, ApiClient client)
        implements AutoCloseable {

    static ApiFixture start(TestDatabase db) {
        return start(db, HttpSettings.DEFAULTS);
    }

    static ApiFixture start(TestDatabase db, HttpSettings settings) {
        return start(db, new PostgresJobStore(db.dataSource()), settings);
    }

    static ApiFixture start(TestDatabase db, JobStore store, HttpSettings settings) {
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
