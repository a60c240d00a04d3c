package io.jobq.domain.job;

import java.util.Objects;

/**
 * The one rule shared by tenant, queue and task names: 1 to 128 characters of
 * {@code [A-Za-z0-9_.:-]}. Keeping the alphabet this small means a name is safe in a log line, a
 * metric label, a URL path segment and a NOTIFY payload without escaping, and can never carry a NUL
 * or a lone surrogate into PostgreSQL.
 */
public final class Identifier {
    /** Longest accepted name, in characters (the columns are {@code varchar(128)}). */
    public static final int MAX_LENGTH = 128;

    private Identifier() {}

    /**
     * Returns {@code value} unchanged when it is a valid name.
     *
     * @param what what the name is, for the error message ("tenant", "queue", "task")
     * @throws NullPointerException if {@code value} is null
     * @throws IllegalArgumentException if it is empty, longer than 128 characters, or has a
     *     character outside {@code [A-Za-z0-9_.:-]}
     */
    public static String check(String what, String value) {
        Objects.requireNonNull(value, what);
        if (!isValid(value)) {
            throw new IllegalArgumentException(what + " must be 1-" + MAX_LENGTH
                    + " characters of [A-Za-z0-9_.:-], was " + describe(value));
        }
        return value;
    }

    /** Whether {@code value} would pass {@link #check}. */
    public static boolean isValid(String value) {
        // A loop, not a regex: every claimed job's tenant, queue and task pass here, and a Matcher per
        // name showed in the claim loop's profile.
        if (value == null || value.isEmpty() || value.length() > MAX_LENGTH) return false;
        for (int i = 0; i < value.length(); i++) {
            if (!inAlphabet(value.charAt(i))) return false;
        }
        return true;
    }

    /** Whether {@code c} (a char or code point) is in {@code [A-Za-z0-9_.:-]}: ASCII only, so a surrogate half fails. */
    public static boolean inAlphabet(int c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                || c == '_' || c == '.' || c == ':' || c == '-';
    }

    private static String describe(String value) {
        if (value.isEmpty()) return "empty";
        if (value.length() > MAX_LENGTH) return value.length() + " characters long";
        return "\"" + StoredText.excerpt(value) + "\"";
    }
}
