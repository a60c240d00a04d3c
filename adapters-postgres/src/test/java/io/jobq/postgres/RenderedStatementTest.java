package io.jobq.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.Test;

/** Rendering once: each {@code ?} takes the bind its placeholder named, in the order of the text. */
class RenderedStatementTest {

    @Test
    void placeholdersAreReadInTheOrderTheyAppear() {
        assertThat(RenderedStatement.placeholders("WHERE queue = {3} LIMIT {0} SET a = {1}, b = {2}, c = {3}"))
                .containsExactly(3, 0, 1, 2, 3);
        assertThat(RenderedStatement.placeholders("SELECT 1")).isEmpty();
    }

    @Test
    void theTextIsJooqsOwnRendering() {
        var dsl = DSL.using(SQLDialect.POSTGRES);
        RenderedStatement s = RenderedStatement.render(dsl, "SELECT {1}::text[], {0}", 1, new String[0]);

        assertThat(s.sql()).isEqualTo(dsl.resultQuery("SELECT {1}::text[], {0}", 1, new String[0]).getSQL());
        assertThat(s.order()).containsExactly(1, 0);
    }

    @Test
    void aPlaceholderInsideALiteralIsCaughtWhenRendering() {
        var dsl = DSL.using(SQLDialect.POSTGRES);

        assertThatThrownBy(() -> RenderedStatement.render(dsl, "SELECT '{1}', {0}", 1))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("2 placeholders where jOOQ binds 1");
    }

    @Test
    void aLoneArrayIsNotSpreadIntoTheBinds() {
        RenderedStatement s = new RenderedStatement("SELECT ?", new int[] {0});
        var dsl = DSL.using(SQLDialect.POSTGRES);

        assertThatThrownBy(() -> s.fetch(dsl, (Object[]) new Long[] {1L, 2L}))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("takes 1 binds, got 2");
    }

    @Test
    void aBindItCannotSetIsAProgrammingErrorNamingItsPosition() {
        RenderedStatement s = new RenderedStatement("SELECT ?", new int[] {0});
        var dsl = DSL.using(new org.jooq.tools.jdbc.MockConnection(ctx -> new org.jooq.tools.jdbc.MockResult[0]),
                SQLDialect.POSTGRES);

        assertThatThrownBy(() -> s.fetch(dsl, java.time.Instant.EPOCH))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("java.time.Instant at 1");
    }
}
