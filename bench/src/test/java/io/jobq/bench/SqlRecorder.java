package io.jobq.bench;

import io.jobq.postgres.testing.JdbcProxies;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import javax.sql.DataSource;

/**
 * Records what reaches the JDBC driver: each execution of a prepared statement, as its SQL text and the
 * parameters bound at that moment. A recorder around real pgjdbc connections, not a mock: every call
 * still goes to the driver and the database, so what is recorded is what ran.
 *
 * <p>Parameters are tracked the way the driver keeps them: a value set once stays bound across
 * executions until it is set again or cleared (the floor binds the worker once per loop, jOOQ binds
 * everything per statement). Plain {@code Statement}s and batches are not recorded; neither the store's
 * claim and complete nor the floor use them.
 */
final class SqlRecorder {

    /**
     * One execution.
     *
     * @param sql the text given to {@code prepareStatement}
     * @param binds the bound parameters by index, as {@code $index=setter(value[, extra args])}, e.g.
     *     {@code $2=setInt(10)}; the index is kept so a gap (a parameter never bound) cannot hide
     */
    record Execution(String sql, List<String> binds) {
        @Override
        public String toString() {
            return sql + "\n  binds " + binds;
        }
    }

    private static final Set<String> EXECUTE = Set.of("execute", "executeQuery", "executeUpdate", "executeLargeUpdate");

    private final List<Execution> executions = new ArrayList<>();

    /** What ran so far, in order. */
    synchronized List<Execution> executions() {
        return List.copyOf(executions);
    }

    synchronized void clear() {
        executions.clear();
    }

    private synchronized void add(Execution e) {
        executions.add(e);
    }

    /** {@code ds}, handing out recorded connections. */
    DataSource wrap(DataSource ds) {
        return JdbcProxies.afterEachCall(DataSource.class, ds, (method, args, result) ->
                result instanceof Connection c && method.getName().equals("getConnection") ? wrap(c) : result);
    }

    /** {@code c}, recording every prepared statement it creates. */
    Connection wrap(Connection c) {
        return JdbcProxies.afterEachCall(Connection.class, c, (method, args, result) ->
                result instanceof PreparedStatement ps && method.getName().equals("prepareStatement")
                        ? recorded(ps, (String) args[0])
                        : result);
    }

    private PreparedStatement recorded(PreparedStatement ps, String sql) {
        TreeMap<Integer, String> bound = new TreeMap<>();
        return JdbcProxies.afterEachCall(PreparedStatement.class, ps, (method, args, result) -> {
            String name = method.getName();
            int n = args == null ? 0 : args.length;
            // Parameter setters are set*(int index, value, …); setFetchSize(int) and the like have one argument.
            if (name.startsWith("set") && n >= 2 && args[0] instanceof Integer index) {
                bound.put(index, "$" + index + "=" + name + "(" + String.join(", ",
                        Arrays.stream(args, 1, n).map(String::valueOf).toList()) + ")");
            } else if (name.equals("clearParameters")) {
                bound.clear();
            } else if (EXECUTE.contains(name) && n == 0) {
                add(new Execution(sql, List.copyOf(bound.values())));
            }
            return result;
        });
    }

}
