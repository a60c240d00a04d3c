package io.jobq.application.worker;

import io.jobq.application.port.JobStore;
import java.nio.charset.StandardCharsets;

/**
 * Makes a failure message storable: PostgreSQL {@code text} refuses NUL, UTF-8 refuses lone
 * surrogates, and an unbounded message (a 100,000-character stack dump) would bloat every row.
 * The worker applies it before {@link JobStore#fail}; stores may apply it again (it is idempotent on
 * its own output).
 *
 * <p>Example with a 20-byte bound: {@code "abcdefghijklmnopqrstuvwxyz"} (26 bytes) becomes a prefix
 * plus the marker {@code "… [truncated, 26 bytes]"} cut to fit; the result never exceeds the bound
 * and never splits a code point (a 4-byte emoji is kept whole or dropped whole).
 */
public final class ErrorText {
    /** Appended to a truncated message, followed by the original length: {@code "… [truncated, 100000 bytes]"}. */
    public static final String TRUNCATION_MARKER = "… [truncated, ";

    private ErrorText() {}

    /** {@link #sanitise(String, int)} bounded to {@link JobStore#MAX_ERROR_BYTES} (8,192 bytes). */
    public static String sanitise(String message) {
        return sanitise(message, JobStore.MAX_ERROR_BYTES);
    }

    /**
     * Removes NUL characters, replaces lone surrogates with U+FFFD, and bounds the result to
     * {@code maxBytes} UTF-8 bytes; a message that had to be cut ends with
     * {@code "… [truncated, <original UTF-8 bytes> bytes]"}.
     *
     * @param maxBytes at least 64, so the marker fits
     * @return valid UTF-16 whose UTF-8 encoding is at most {@code maxBytes} bytes
     * @throws IllegalArgumentException if {@code maxBytes < 64}
     */
    public static String sanitise(String message, int maxBytes) {
        if (maxBytes < 64) throw new IllegalArgumentException("maxBytes must be >= 64, was " + maxBytes);
        String clean = clean(message == null ? "null" : message);
        int total = clean.getBytes(StandardCharsets.UTF_8).length;
        if (total <= maxBytes) return clean;
        String marker = TRUNCATION_MARKER + total + " bytes]";
        int budget = maxBytes - marker.getBytes(StandardCharsets.UTF_8).length;
        StringBuilder out = new StringBuilder();
        int used = 0;
        for (int i = 0; i < clean.length(); ) {
            int cp = clean.codePointAt(i);
            int size = utf8Length(cp);
            if (used + size > budget) break;
            out.appendCodePoint(cp);
            used += size;
            i += Character.charCount(cp);
        }
        return out.append(marker).toString();
    }

    private static String clean(String s) {
        StringBuilder out = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\u0000') continue;
            if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                out.append(c).append(s.charAt(++i));
            } else if (Character.isSurrogate(c)) {
                out.append('\uFFFD');
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    private static int utf8Length(int cp) {
        if (cp < 0x80) return 1;
        if (cp < 0x800) return 2;
        if (cp < 0x10000) return 3;
        return 4;
    }
}
