package io.jobq.archfixture.http;

import io.jobq.archfixture.postgres.PostgresStore;

/**
 * Violating ADAPTERS_DO_NOT_DEPEND_ON_EACH_OTHER (http → postgres) and, together with
 * {@link io.jobq.archfixture.postgres.PostgresStoreCallingHttp}, MODULES_ARE_FREE_OF_CYCLES.
 */
public final class HttpRoutesCallingPostgres {
    public String store(PostgresStore store) {
        return store.name();
    }
}
