package io.jobq.archfixture.bootstrap;

import io.jobq.archfixture.http.HttpRoutes;
import io.jobq.archfixture.postgres.PostgresStore;

/** Innocent: bootstrap wiring both concrete adapters, which is exactly what bootstrap is for. */
public final class Wiring {
    public String wire(PostgresStore store, HttpRoutes routes) {
        return store.name() + routes.path();
    }
}
