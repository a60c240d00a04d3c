package io.jobq.postgres;

import static io.jobq.application.port.Throwables.rootMessage;

import io.jobq.application.port.JobQueueException;
import io.jobq.application.port.StoreUnavailableException;
import io.jobq.application.port.Throwables;
import java.net.ConnectException;
import java.net.SocketException;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.sql.SQLTransientConnectionException;
import org.jooq.exception.DataAccessException;

/**
 * Translates driver and jOOQ exceptions into the port's: connection-level failures become
 * {@link StoreUnavailableException} (HTTP 503, worker back-off), everything else a
 * {@link JobQueueException}. Nothing above this adapter sees {@code SQLException} or jOOQ types.
 */
final class StoreErrors {
    private StoreErrors() {}

    /** SQLSTATE of a serialization failure: the caller's transaction must be retried. */
    static final String SERIALIZATION_FAILURE = "40001";
    /** SQLSTATE of a detected deadlock. */
    static final String DEADLOCK_DETECTED = "40P01";
    /** SQLSTATE of a statement cancelled: a JDBC query timeout, the server's statement_timeout, pg_cancel_backend. */
    static final String QUERY_CANCELED = "57014";

    static RuntimeException translate(String operation, RuntimeException e) {
        if (e instanceof JobQueueException || e instanceof IllegalArgumentException) return e;
        if (isUnavailable(e)) return new StoreUnavailableException(operation, e);
        String state = sqlState(e);
        if (SERIALIZATION_FAILURE.equals(state) || DEADLOCK_DETECTED.equals(state)) {
            return new ConcurrentUpdateException(operation, e);
        }
        return new JobQueueException(operation + " failed: " + rootMessage(e), e);
    }

    /**
     * A read for people, or a write on a caller's behalf, that the driver cancelled after its query timeout
     * (the store's {@code option}), or that the server's statement_timeout or an administrator cancelled:
     * transient, and not the caller's fault, so the store is unavailable for it (HTTP 503); the root cause
     * says which limits cancel a statement, the server's words in brackets. Only for those calls: elsewhere an
     * unavailable store means the database is gone (maintenance skips its whole pass).
     *
     * @param option {@code "readTimeout"} or {@code "writeTimeout"}: the {@code PostgresJobStore.Options} component
     */
    static StoreUnavailableException cancelled(String operation, String option, Throwable e) {
        SQLTimeoutException why = new SQLTimeoutException("the " + (option.startsWith("read") ? "read" : "write")
                + " was cancelled by its timeout (PostgresJobStore.Options." + option + "), the server's statement_timeout"
                + " or an administrator (" + serverMessage(e) + ")", QUERY_CANCELED);
        why.addSuppressed(e);
        return new StoreUnavailableException(operation, why);
    }

    /** Whether {@code t} means the database could not be reached or the session was lost. */
    static boolean isUnavailable(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof SQLTransientConnectionException || c instanceof ConnectException
                    || c instanceof SocketException) {
                return true;
            }
            if (c instanceof SQLException sql && sql.getSQLState() != null) {
                String s = sql.getSQLState();
                // 08: connection exception; 57P01-03: admin/crash shutdown, cannot connect now;
                // 53300: too many connections
                if (s.startsWith("08") || s.equals("57P01") || s.equals("57P02") || s.equals("57P03")
                        || s.equals("53300")) {
                    return true;
                }
            }
        }
        return false;
    }

    static String sqlState(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof SQLException sql && sql.getSQLState() != null) return sql.getSQLState();
            if (c instanceof DataAccessException dae && dae.sqlState() != null && !"00000".equals(dae.sqlState())
                    && dae.getCause() == null) {
                return dae.sqlState();
            }
        }
        return null;
    }

    /** The constraint PostgreSQL named in the error (a CHECK, or a trigger raising with CONSTRAINT), or null. */
    static String constraintName(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof org.postgresql.util.PSQLException p && p.getServerErrorMessage() != null) {
                return p.getServerErrorMessage().getConstraint();
            }
        }
        return null;
    }

    /** PostgreSQL's primary message ("out of memory"), without the driver's "ERROR: " and detail lines; else {@link Throwables#rootMessage}. */
    static String serverMessage(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof org.postgresql.util.PSQLException p && p.getServerErrorMessage() != null
                    && p.getServerErrorMessage().getMessage() != null) {
                return p.getServerErrorMessage().getMessage();
            }
        }
        return rootMessage(t);
    }
}
