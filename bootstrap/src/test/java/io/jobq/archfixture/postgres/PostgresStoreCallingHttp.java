package io.jobq.archfixture.postgres;

import io.jobq.archfixture.http.HttpRoutes;

/**
 * Violating ADAPTERS_DO_NOT_DEPEND_ON_EACH_OTHER (postgres → http) and, together with
 * {@link io.jobq.archfixture.http.HttpRoutesCallingPostgres}, MODULES_ARE_FREE_OF_CYCLES.
 */
public final class PostgresStoreCallingHttp {
    public String route(HttpRoutes routes) {
        return routes.path();
    }
}
