package io.jobq.archfixture.postgres;

/** Innocent on its own: a store adapter that depends on nothing else. Other fixtures depend on it. */
public final class PostgresStore {
    public String name() {
        return "postgres";
    }
}
