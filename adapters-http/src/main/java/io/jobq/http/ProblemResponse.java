package io.jobq.http;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.jobq.domain.job.StoredText;
import java.util.Objects;

/**
 * The body of every error answer: {@code {"error": {"code": "...", "message": "...", "field": "..."}}}.
 * {@code field} is present when one field is at fault (a body field such as {@code "max_attempts"}, a
 * query parameter such as {@code "limit"}, or a path parameter such as {@code "id"}), absent otherwise.
 *
 * <p>Serialised, it is at most {@value #MAX_BODY_BYTES} bytes whatever it was built from: this is the
 * one place that bounds error bodies, so a message that quotes too much of a request (or a library's
 * message that does) cannot make the answer large. Each text is cut to a byte budget (message 1,024,
 * field 256, code 64 UTF-8 bytes, {@link StoredText#TRUNCATION_MARKER} included), with control
 * characters made spaces and NUL and lone surrogates made U+FFFD, so JSON escaping can at most double
 * it (a quote or backslash becomes two bytes): 2 × (1,024 + 256 + 64) + 40 bytes of structure < 4 KiB.
 */
public record ProblemResponse(Problem error) {
    /** The most bytes an error body can have: {@value}. */
    public static final int MAX_BODY_BYTES = 4096;

    private static final int MAX_MESSAGE_BYTES = 1024;
    private static final int MAX_FIELD_BYTES = 256;
    private static final int MAX_CODE_BYTES = 64;

    /**
     * @param code stable, machine-readable: see {@link ApiException} for the list
     * @param message for humans; never a stack trace or SQL
     * @param field the offending field, or null
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Problem(String code, String message, String field) {
        /** Bounds each text as the class comment says. */
        public Problem {
            code = bounded(Objects.requireNonNull(code, "code"), MAX_CODE_BYTES);
            message = bounded(Objects.requireNonNull(message, "message"), MAX_MESSAGE_BYTES);
            field = field == null ? null : bounded(field, MAX_FIELD_BYTES);
        }
    }

    public static ProblemResponse of(String code, String message, String field) {
        return new ProblemResponse(new Problem(code, message, field));
    }

    private static String bounded(String text, int maxBytes) {
        // Replace control characters (JSON would escape each to 6 bytes) on at most what can survive the cut.
        CharSequence head = text.length() > maxBytes ? text.subSequence(0, maxBytes + 1) : text;
        StringBuilder out = new StringBuilder(head.length());
        for (int i = 0; i < head.length(); i++) {
            char c = head.charAt(i);
            out.append(c != 0 && (c < 0x20 || c == 0x7f) ? ' ' : c);
        }
        return StoredText.sanitize(out.toString(), maxBytes);
    }
}
