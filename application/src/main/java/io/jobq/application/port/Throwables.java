package io.jobq.application.port;

/**
 * The one home for reading a failure's root cause, used by the adapters, the worker and the launcher
 * when they put "what really went wrong" into their own messages. Drivers wrap the useful message
 * ("Connection refused", "out of memory") several causes deep. The walk also stops at an exception
 * that reports itself as its own cause (some overridden {@code getCause()} do), rather than looping.
 */
public final class Throwables {

    private Throwables() {}

    /**
     * @param t a failure, not null
     * @return the innermost cause of {@code t}, or {@code t} itself when it has no cause
     */
    public static Throwable rootCause(Throwable t) {
        Throwable root = t;
        while (root.getCause() != null && root.getCause() != root) root = root.getCause();
        return root;
    }

    /**
     * @param t a failure, not null
     * @return the root cause's message, or, when it has none, its {@link Throwable#toString()} (the class
     *     name), so a message built from it never reads "null"
     */
    public static String rootMessage(Throwable t) {
        Throwable root = rootCause(t);
        return root.getMessage() == null ? root.toString() : root.getMessage();
    }
}
