package io.jobq.archfixture.client;

import io.jobq.archfixture.postgres.PostgresStore;

/**
 * Violating ONLY_BOOTSTRAP_AND_BENCH_KNOW_THE_ADAPTERS: a module other than bootstrap or bench (a
 * future Java client, say) that reaches for a concrete adapter. It lives in a package no other rule
 * covers, so this rule alone must catch it.
 */
public final class ClientUsingPostgres {
    public String enqueue(PostgresStore store) {
        return store.name();
    }
}
