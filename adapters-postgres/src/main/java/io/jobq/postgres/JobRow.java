package io.jobq.postgres;

import static io.jobq.postgres.schema.Tables.JOBS;

import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import org.jooq.Field;
import org.jooq.JSONB;

/**
 * One row of {@code jobs}, every column the generated table knows, read straight from the driver: what the hot path's
 * statements ({@link RenderedStatement}: the claim, the outcome statement) return with {@code RETURNING j.*}.
 * jOOQ's reading of a result set into records (an execute context per result set, a binding per value)
 * was a tenth of a busy single-slot worker's CPU in a profile of 8 of them on 2 cores (issue 14), CPU the
 * database then lacked. Each value is read as the generated table's field reads it: {@code timestamptz} by
 * pgjdbc's {@code getObject(i, OffsetDateTime.class)} as {@link TimestamptzBinding} does (so
 * {@code infinity} reads as {@link OffsetDateTime#MAX}), {@code jsonb} as its text, SQL NULL as null.
 * {@code JobRowTest} reads the same rows both ways and compares them, column by column.
 */
final class JobRow implements JobRows.Columns {
    /** Each field of {@code JOBS} by identity: its position in the row. */
    private static final Map<Field<?>, Integer> POSITION = new IdentityHashMap<>();
    private static final Field<?>[] FIELDS = JOBS.fields();

    static {
        for (int i = 0; i < FIELDS.length; i++) POSITION.put(FIELDS[i], i);
    }

    private final Object[] values;

    private JobRow(Object[] values) {
        this.values = values;
    }

    /**
     * The value of {@code column}, one of the generated {@code JOBS} table's own fields (not a copy or an
     * alias of one).
     *
     * @throws IllegalArgumentException for any other field: a programming error
     */
    @Override
    public <T> T get(Field<T> column) {
        Integer at = POSITION.get(column);
        if (at == null) throw new IllegalArgumentException("not a column of the jobs table: " + column);
        return column.getType().cast(values[at]);
    }

    /**
     * Every row of {@code rs}, which must return the table's columns ({@code RETURNING j.*}). Columns are
     * found by name, so a column a newer schema appended (a worker of the previous build during a rolling
     * deploy, after {@code jobq api} migrated) is passed over, as jOOQ's reading passed over it: the rows of a
     * claim that has already committed must reach the worker.
     *
     * @throws SQLException as the driver does; naming the column when one of the table's is missing
     */
    static List<JobRow> readAll(ResultSet rs) throws SQLException {
        int[] at = positions(rs);
        List<JobRow> rows = new ArrayList<>();
        while (rs.next()) {
            Object[] values = new Object[FIELDS.length];
            for (int i = 0; i < FIELDS.length; i++) values[i] = read(rs, at[i], FIELDS[i].getType());
            rows.add(new JobRow(values));
        }
        return rows;
    }

    /** Where each field's column is in {@code rs}: by position where the names agree (always, but for a newer schema), else by name. */
    private static int[] positions(ResultSet rs) throws SQLException {
        ResultSetMetaData meta = rs.getMetaData();
        int columns = meta.getColumnCount();
        int[] at = new int[FIELDS.length];
        for (int i = 0; i < FIELDS.length; i++) {
            String name = FIELDS[i].getName();
            at[i] = i < columns && name.equals(meta.getColumnLabel(i + 1)) ? i + 1 : rs.findColumn(name);
        }
        return at;
    }

    private static Object read(ResultSet rs, int i, Class<?> type) throws SQLException {
        Object value;
        if (type == Long.class) value = rs.getLong(i);
        else if (type == Integer.class) value = rs.getInt(i);
        else if (type == Short.class) value = rs.getShort(i);
        else if (type == Double.class) value = rs.getDouble(i);
        else if (type == Boolean.class) value = rs.getBoolean(i);
        else if (type == String.class) value = rs.getString(i);
        else if (type == JSONB.class) value = JSONB.jsonbOrNull(rs.getString(i));
        else if (type == OffsetDateTime.class) value = rs.getObject(i, OffsetDateTime.class);
        // A column type added to the table without a case here: a programming error, caught by JobRowTest.
        else throw new IllegalStateException("no reading for column " + i + " of type " + type.getName());
        return rs.wasNull() ? null : value;
    }
}
