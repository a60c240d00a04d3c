package io.jobq.postgres;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;
import org.jooq.DSLContext;
import org.jooq.ResultQuery;
import org.jooq.util.postgres.PostgresUtils;

/**
 * A plain-SQL statement of the hot path (the claim, the outcome statement) that jOOQ renders ONCE and
 * pgjdbc then executes with fresh binds, its rows read back as {@link JobRow}s. jOOQ parses a
 * plain-SQL template, builds a bind value per argument (looking up array data types) and renders the SQL
 * on every execution; a profile of 16 single-slot workers (issue 14) put a third of the worker JVM's CPU
 * there, CPU the database then lacked on a 2-core machine. The text and the setters are jOOQ's own (the
 * rendering is jOOQ's; arrays are bound as jOOQ binds them, {@code setObject(literal, Types.OTHER)} with
 * jOOQ's array literal), so the database sees exactly the statement jOOQ would send; the bench's
 * {@code FloorStatementsTest} checks that, setter by setter.
 *
 * <p>Binds are {@link Integer}, {@link Long}, {@link String}, or arrays of those and of {@link Double}
 * (elements may be null); anything else is a programming error. Executing past jOOQ also passes by its
 * execute listeners and per-query settings (timeouts, fetch size): jobq configures none; one that did
 * would have to set them here too.
 *
 */
final class RenderedStatement {
    private static final Pattern PLACEHOLDER = Pattern.compile("\\{(\\d+)}");

    private final String sql;
    private final int[] order;
    /** How many binds a call hands in: the highest placeholder number + 1. */
    private final int binds;

    /**
     * @param sql the statement as jOOQ rendered it, with {@code ?} placeholders
     * @param order for each {@code ?} in {@code sql}, which bind it takes: the template's {@code {n}} in the
     *     order they appear in its text (the claim's {@code {3}}, its queue, comes first)
     */
    RenderedStatement(String sql, int[] order) {
        this.sql = Objects.requireNonNull(sql, "sql");
        this.order = Objects.requireNonNull(order, "order").clone();
        this.binds = Arrays.stream(order).max().orElse(-1) + 1;
    }

    String sql() {
        return sql;
    }

    int[] order() {
        return order.clone();
    }

    /**
     * Renders {@code template} (jOOQ plain SQL with {@code {0}}-style placeholders, none inside a string
     * literal or comment) as jOOQ would for binds of {@code sampleBinds}' types; only their types matter.
     */
    static RenderedStatement render(DSLContext dsl, String template, Object... sampleBinds) {
        return of(dsl.resultQuery(template, sampleBinds), template);
    }

    /**
     * {@code query}, built by jOOQ from {@code template}, rendered once.
     *
     * @throws IllegalStateException if the template's placeholders are not the query's binds, one for one (a
     *     {@code {n}} inside a literal or comment, a {@code ?} operator): a programming error
     */
    static RenderedStatement of(ResultQuery<?> query, String template) {
        int[] order = placeholders(template);
        int jooqBinds = query.getBindValues().size();
        if (order.length != jooqBinds) {
            throw new IllegalStateException("the template has " + order.length + " placeholders where jOOQ binds " + jooqBinds);
        }
        return new RenderedStatement(query.getSQL(), order);
    }

    /**
     * This statement with {@code before} and {@code after} around its text: statements without binds, such as
     * a {@code SET LOCAL} before it and a {@code COMMIT} after it, so that a whole transaction goes to the server
     * in one text ({@link #fetchEach} says in how many round trips).
     *
     * @throws IllegalArgumentException if either holds a {@code ?} (it would take a bind)
     */
    RenderedStatement around(String before, String after) {
        if (before.indexOf('?') >= 0 || after.indexOf('?') >= 0) {
            throw new IllegalArgumentException("text around a statement cannot take binds: " + before + " … " + after);
        }
        return new RenderedStatement(before + sql + after, order);
    }

    /** The {@code {n}} of {@code template} in the order they appear. */
    static int[] placeholders(String template) {
        return PLACEHOLDER.matcher(template).results().mapToInt(m -> Integer.parseInt(m.group(1))).toArray();
    }

    /**
     * Executes the statement on {@code dsl}'s connection (its transaction's, inside one) and reads every row
     * as a {@link JobRow}: the statement must return the columns of {@code jobs} in table order
     * ({@code RETURNING j.*}).
     *
     * @throws IllegalStateException unless exactly one statement of the text returns rows (else use {@link #fetchEach})
     * @throws org.jooq.exception.DataAccessException wrapping the driver's {@link SQLException}, as jOOQ's own calls do
     */
    List<JobRow> fetch(DSLContext dsl, Object... values) {
        List<List<JobRow>> each = fetchEach(dsl, values);
        if (each.size() != 1) {
            throw new IllegalStateException(each.size() + " statements of the text returned rows, not one: " + sql);
        }
        return each.getFirst();
    }

    /**
     * As {@link #fetch}, for a text of several statements separated by {@code ;}: the rows of each statement
     * that returns rows (its {@code RETURNING}), one list per such statement, in the text's order; a
     * statement that returns none ({@code SET LOCAL}, {@code COMMIT}, see {@link #around}) is passed over.
     * pgjdbc sends them together, in one round trip, but may put a Sync (a round trip) after one of them: 42.7.14
     * does once the text is prepared and described, from its 6th call on a connection, after each statement
     * whose answer it cannot bound (rows of text or jsonb; measured: set-bound, outcomes, claim-and-commit, three
     * round trips). In auto-commit a Sync commits what came before it: call this inside a transaction when
     * they must commit together (a {@code COMMIT} at the text's end then ends it with the last statement, and
     * pgjdbc's own commit afterwards finds nothing to send). Each statement takes its own snapshot (READ
     * COMMITTED), so a later one sees what an earlier one wrote and what others committed meanwhile.
     *
     * @throws org.jooq.exception.DataAccessException wrapping the driver's {@link SQLException}
     */
    List<List<JobRow>> fetchEach(DSLContext dsl, Object... values) {
        // An array passed alone would be spread into the varargs: refuse rather than bind its elements.
        if (values.length != binds) {
            throw new IllegalArgumentException("the statement takes " + binds + " binds, got " + values.length);
        }
        return dsl.connectionResult(c -> {
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                for (int i = 0; i < order.length; i++) bind(ps, i + 1, values[order[i]]);
                List<List<JobRow>> results = new ArrayList<>(2);
                for (boolean isRows = ps.execute(); isRows || ps.getUpdateCount() != -1; isRows = ps.getMoreResults()) {
                    if (!isRows) continue; // a command's status: SET LOCAL, COMMIT
                    try (ResultSet rs = ps.getResultSet()) {
                        results.add(JobRow.readAll(rs));
                    }
                }
                return results;
            }
        });
    }

    private static void bind(PreparedStatement ps, int index, Object value) throws SQLException {
        switch (value) {
            case Integer i -> ps.setInt(index, i);
            case Long l -> ps.setLong(index, l);
            case String s -> ps.setString(index, s);
            case Object[] array -> ps.setObject(index, PostgresUtils.toPGArrayString(array), Types.OTHER);
            case null -> throw new IllegalArgumentException("cannot bind null at " + index + ": bind an array of nulls instead");
            default -> throw new IllegalArgumentException("cannot bind a " + value.getClass().getName() + " at " + index);
        }
    }
}
