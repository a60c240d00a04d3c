package io.jobq.postgres;

import java.sql.SQLException;
import java.time.OffsetDateTime;
import org.jooq.Binding;
import org.jooq.BindingGetResultSetContext;
import org.jooq.BindingGetSQLInputContext;
import org.jooq.BindingGetStatementContext;
import org.jooq.BindingRegisterContext;
import org.jooq.BindingSQLContext;
import org.jooq.BindingSetSQLOutputContext;
import org.jooq.BindingSetStatementContext;
import org.jooq.Converter;
import org.jooq.impl.DefaultBinding;
import org.jooq.impl.SQLDataType;

/**
 * How every {@code timestamptz} column of jobq's tables is read (the code generator puts it on each, see
 * adapters-postgres/pom.xml): by pgjdbc's own {@code getObject(i, OffsetDateTime.class)}, always at offset
 * UTC; writes and the SQL text stay jOOQ's. Two reasons:
 *
 * <ul>
 *   <li>jOOQ reads the column as text and parses it, and throws on {@code infinity} and {@code -infinity},
 *       which PostgreSQL accepts in any timestamptz: one such value written by hand into a queued job failed
 *       every claim that took it (after the claim had committed) and every read that showed it. pgjdbc
 *       reads them as {@link OffsetDateTime#MAX} and {@link OffsetDateTime#MIN}.
 *   <li>The parse was a tenth of a claim loop's CPU in a profile of 16 workers (issue 14).
 * </ul>
 *
 * Finite values read as the same instants as jOOQ's reading gives, in any session time zone (jOOQ kept the
 * session's offset; jobq only ever uses the instant): {@code TimestamptzBindingTest}.
 */
public final class TimestamptzBinding implements Binding<OffsetDateTime, OffsetDateTime> {
    private static final long serialVersionUID = 1L;

    private static final Binding<OffsetDateTime, OffsetDateTime> JOOQ = DefaultBinding.binding(SQLDataType.TIMESTAMPWITHTIMEZONE);

    @Override
    public Converter<OffsetDateTime, OffsetDateTime> converter() {
        return JOOQ.converter();
    }

    @Override
    public void sql(BindingSQLContext<OffsetDateTime> ctx) throws SQLException {
        JOOQ.sql(ctx);
    }

    @Override
    public void register(BindingRegisterContext<OffsetDateTime> ctx) throws SQLException {
        JOOQ.register(ctx);
    }

    @Override
    public void set(BindingSetStatementContext<OffsetDateTime> ctx) throws SQLException {
        JOOQ.set(ctx);
    }

    @Override
    public void set(BindingSetSQLOutputContext<OffsetDateTime> ctx) throws SQLException {
        JOOQ.set(ctx);
    }

    @Override
    public void get(BindingGetResultSetContext<OffsetDateTime> ctx) throws SQLException {
        ctx.value(ctx.resultSet().getObject(ctx.index(), OffsetDateTime.class));
    }

    @Override
    public void get(BindingGetStatementContext<OffsetDateTime> ctx) throws SQLException {
        ctx.value(ctx.statement().getObject(ctx.index(), OffsetDateTime.class));
    }

    @Override
    public void get(BindingGetSQLInputContext<OffsetDateTime> ctx) throws SQLException {
        JOOQ.get(ctx);
    }
}
