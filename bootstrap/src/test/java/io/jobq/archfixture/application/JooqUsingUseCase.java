package io.jobq.archfixture.application;

import org.jooq.DSLContext;

/** Violating APPLICATION_DEPENDS_ONLY_ON_THE_DOMAIN_LOGGING_AND_JSON: a use case that talks jOOQ directly. */
public final class JooqUsingUseCase {
    private final DSLContext dsl;

    public JooqUsingUseCase(DSLContext dsl) {
        this.dsl = dsl;
    }

    public DSLContext dsl() {
        return dsl;
    }
}
