package io.jobq.domain.job;

import java.nio.charset.StandardCharsets;

/**
 * The one sanitising path for every text jobq writes back about a run (a failure's message, and the
 * strings inside a handler's JSON result): PostgreSQL refuses NUL in {@code text} and {@code jsonb},
 * and a Java string may hold lone surrogates that no UTF-8 encoder accepts. A failure report must
 * never fail to store, or the job would be stuck in running until its lease lapses.
 *
 * <p>Rules: NUL becomes U+FFFD (the replacement character), so does every lone surrogate; the
 * result is cut to at most {@code maxBytes} UTF-8 bytes at a code point boundary (never splitting a
 * surrogate pair or a multi-byte sequence) and ends with {@link #TRUNCATION_MARKER} when cut.
 */
public final class StoredText {
    /** Appended to a text that was cut to fit: {@value}. */
    public static final String TRUNCATION_MARKER = "…[truncated]";

    private static final int MARKER_BYTES = TRUNCATION_MARKER.getBytes(StandardCharsets.UTF_8).length;

    private StoredText() {}

    /**
     * Returns {@code text} with NUL and lone surrogates replaced by U+FFFD, bounded to
     * {@code maxBytes} UTF-8 bytes including the truncation marker.
     *
     * @param maxBytes at least 32
     * @throws IllegalArgumentException if {@code maxBytes < 32}
     */
    public static String sanitize(String text, int maxBytes) {
        if (maxBytes < 32) throw new IllegalArgumentException("maxBytes must be >= 32, was " + maxBytes);
        if (text == null) return "";
        StringBuilder out = new StringBuilder(Math.min(text.length(), maxBytes));
        int bytes = 0;
        int budget = maxBytes - MARKER_BYTES;
        boolean cut = false;
        for (int i = 0; i < text.length(); ) {
            int cp = text.codePointAt(i);
            int width = Character.charCount(cp);
            if (cp == 0 || (width == 1 && Character.isSurrogate((char) cp))) cp = 0xFFFD;
            int cpBytes = utf8Length(cp);
            if (bytes + cpBytes > budget && !fitsWhole(text, i, bytes, maxBytes)) {
                cut = true;
                break;
            }
            out.appendCodePoint(cp);
            bytes += cpBytes;
            i += width;
        }
        if (cut) out.append(TRUNCATION_MARKER);
        return out.toString();
    }

    /** Whether the rest of {@code text} from {@code from} fits in {@code maxBytes} without a marker. */
    private static boolean fitsWhole(String text, int from, int bytesSoFar, int maxBytes) {
        long total = bytesSoFar;
        for (int i = from; i < text.length(); ) {
            int cp = text.codePointAt(i);
            int width = Character.charCount(cp);
            if (cp == 0 || (width == 1 && Character.isSurrogate((char) cp))) cp = 0xFFFD;
            total += utf8Length(cp);
            if (total > maxBytes) return false;
            i += width;
        }
        return true;
    }

    /**
     * Replaces NUL and lone surrogates by U+FFFD without bounding the length: for strings inside a
     * JSON document, whose size the caller bounds as a whole.
     */
    public static String clean(String text) {
        StringBuilder out = null;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            boolean bad = c == 0;
            if (Character.isHighSurrogate(c)) {
                if (i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                    if (out != null) out.append(c).append(text.charAt(i + 1));
                    i++;
                    continue;
                }
                bad = true;
            } else if (Character.isLowSurrogate(c)) {
                bad = true;
            }
            if (bad && out == null) out = new StringBuilder(text.length()).append(text, 0, i);
            if (out != null) out.append(bad ? '\uFFFD' : c);
        }
        return out == null ? text : out.toString();
    }

    /**
     * Returns {@code text} unchanged when PostgreSQL can store it in a {@code text} or {@code jsonb}
     * column: no NUL character and no lone surrogate (which has no UTF-8 form; the driver would silently
     * send {@code ?} instead). For input a caller gave, which is refused rather than sanitised.
     *
     * @param what the field's name, for the message ("payload", "idempotency_key")
     * @throws IllegalArgumentException naming {@code what} and the first offending character's index
     */
    public static String requireStorable(String what, String text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == 0) {
                throw new IllegalArgumentException(what + " contains the NUL character (\\u0000) at index " + i
                        + ", which PostgreSQL cannot store");
            }
            if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                throw new IllegalArgumentException(what + " contains a lone surrogate (\\u" + Integer.toHexString(c)
                        + ") at index " + i + ", which is not valid Unicode");
            }
        }
        return text;
    }

    /** Most code points of a caller's value an error message quotes: {@value}. */
    public static final int EXCERPT_LENGTH = 64;

    /**
     * {@code text} as an error message may quote it: its first {@value #EXCERPT_LENGTH} code points, each
     * outside printable ASCII written as a six-character escape (backslash, {@code u}, four hex digits;
     * two for a code point beyond U+FFFF), so NUL, control characters and lone surrogates are visible and
     * harmless, followed by "…" when cut. At most 64 × 12 + 1 characters whatever the input, and it reads
     * no further into {@code text} than it quotes, so a megabyte of input costs nothing. Example: "a",
     * NUL, "b" comes out as the eight characters a, backslash, u, 0, 0, 0, 0, b.
     */
    public static String excerpt(CharSequence text) {
        StringBuilder out = new StringBuilder();
        int i = 0;
        for (int n = 0; i < text.length() && n < EXCERPT_LENGTH; n++) {
            int cp = Character.codePointAt(text, i);
            if (cp >= 0x20 && cp < 0x7f) {
                out.append((char) cp);
            } else if (cp > 0xffff) {
                out.append(String.format("\\u%04x\\u%04x", (int) Character.highSurrogate(cp), (int) Character.lowSurrogate(cp)));
            } else {
                out.append(String.format("\\u%04x", cp));
            }
            i += Character.charCount(cp);
        }
        return i < text.length() ? out.append('…').toString() : out.toString();
    }

    /** The length of {@code text} in UTF-8 bytes, a lone surrogate counted as the 3 bytes of U+FFFD. */
    public static long utf8Length(String text) {
        long n = 0;
        for (int i = 0; i < text.length(); ) {
            int cp = text.codePointAt(i);
            n += utf8Length(cp);
            i += Character.charCount(cp);
        }
        return n;
    }

    private static int utf8Length(int cp) {
        if (cp < 0x80) return 1;
        if (cp < 0x800) return 2;
        if (cp < 0x10000) return 3;
        return 4;
    }
}
