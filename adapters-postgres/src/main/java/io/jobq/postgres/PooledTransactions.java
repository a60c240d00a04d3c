package io.jobq.postgres;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.util.ArrayDeque;
import java.util.Deque;
import javax.sql.DataSource;
import org.jooq.TransactionContext;
import org.jooq.TransactionProvider;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.DefaultConnectionProvider;

/**
 * jOOQ transactions on jobq's pool, one round trip cheaper than jOOQ's own. jOOQ 3.21's
 * {@code DefaultTransactionProvider} asks the connection for its isolation level at every begin, so as to
 * restore it afterwards, and pgjdbc answers that with a {@code SHOW TRANSACTION ISOLATION LEVEL} query: a
 * round trip before every enqueue, reap and other transaction (jOOQ issue #20135). jobq never changes the
 * isolation level or read-only flag of its pooled connections, so there is nothing to restore: begin takes a
 * connection and turns auto-commit off, commit or rollback ends the transaction and gives the connection
 * back (HikariCP rolls back anything left open and resets auto-commit). A transaction begun inside
 * another is a savepoint, as with jOOQ's provider.
 */
final class PooledTransactions implements TransactionProvider {
    /** The key under which a transaction's state rides in its (derived, per-transaction) configuration. */
    private static final Object STATE = new Object();

    /** One outermost transaction: its connection, and the savepoints of the transactions nested in it. */
    private static final class State {
        final Connection connection;
        final Deque<Savepoint> savepoints = new ArrayDeque<>();

        State(Connection connection) {
            this.connection = connection;
        }
    }

    private final DataSource pool;

    PooledTransactions(DataSource pool) {
        this.pool = pool;
    }

    @Override
    public void begin(TransactionContext ctx) {
        // A nested transaction's configuration is derived from its outer one's, whose data it copies.
        if (ctx.configuration().data(STATE) instanceof State outer) {
            try {
                outer.savepoints.push(outer.connection.setSavepoint());
            } catch (SQLException e) {
                throw new DataAccessException("cannot set a savepoint: " + e.getMessage(), e);
            }
            return;
        }
        Connection connection;
        try {
            connection = pool.getConnection();
        } catch (SQLException e) {
            throw new DataAccessException("cannot get a connection: " + e.getMessage(), e);
        }
        try {
            connection.setAutoCommit(false);
        } catch (SQLException e) {
            closeQuietly(connection);
            throw new DataAccessException("cannot begin a transaction: " + e.getMessage(), e);
        }
        ctx.configuration().data(STATE, new State(connection));
        ctx.configuration().set(new DefaultConnectionProvider(connection));
    }

    @Override
    public void commit(TransactionContext ctx) {
        if (!(ctx.configuration().data(STATE) instanceof State s)) return;
        try {
            if (!s.savepoints.isEmpty()) {
                s.connection.releaseSavepoint(s.savepoints.pop());
                return;
            }
            try {
                s.connection.commit();
            } finally {
                end(ctx, s);
            }
        } catch (SQLException e) {
            throw new DataAccessException("cannot commit: " + e.getMessage(), e);
        }
    }

    @Override
    public void rollback(TransactionContext ctx) {
        // No state: the commit that failed already gave the connection back (rolled back by the pool).
        if (!(ctx.configuration().data(STATE) instanceof State s)) return;
        try {
            if (!s.savepoints.isEmpty()) {
                s.connection.rollback(s.savepoints.pop());
                return;
            }
            try {
                s.connection.rollback();
            } finally {
                end(ctx, s);
            }
        } catch (SQLException e) {
            throw new DataAccessException("cannot roll back: " + e.getMessage(), e);
        }
    }

    private static void end(TransactionContext ctx, State s) {
        ctx.configuration().data().remove(STATE);
        closeQuietly(s.connection);
    }

    private static void closeQuietly(Connection connection) {
        try {
            connection.close(); // back to the pool, which resets auto-commit
        } catch (SQLException e) {
            // the pool evicts a connection it cannot reset; nothing more to do here
        }
    }
}
