package io.jobq.domain.job;

import java.util.Optional;

/**
 * How much longer a JSON text becomes when PostgreSQL reads it back from {@code jsonb}. jsonb keeps
 * every number as a {@code numeric} and renders it in plain notation: {@code 1e5} comes back as
 * {@code 100000}, {@code 1.5e-7} as {@code 0.00000015}, and {@code 1e131071} as 131,072 digits. So a
 * 90 kB payload of such numbers is stored compactly but renders to over 1 GB, which PostgreSQL cannot
 * build ("out of memory"): every statement that returns the row then fails, and a job the claim
 * cannot return stalls its queue. jobq refuses such texts before they are written.
 *
 * <p>The same scan measures the two other things a stored payload can hold that the worker's JSON
 * parser (Jackson, default limits) refuses: a number with more than 1,000 digits as printed, and
 * nesting deeper than 1,000.
 *
 * <p>The rendered length of one number, from its literal: with {@code n} significant mantissa digits,
 * {@code f} digits after the point and exponent {@code e}, the scale is {@code max(0, f - e)}; the
 * integer part has {@code n + e - f} digits when {@code e >= f}, else {@code max(1, n - scale)}; a
 * point precedes a non-zero scale; a minus sign only for a non-zero value. Checked against
 * PostgreSQL 15's {@code jsonb::text}.
 */
public final class JsonNumbers {
    /**
     * Most bytes the numbers of one stored JSON value may add when rendered back: 1 MiB. A double's
     * widest plain form is about 330 characters, so real payloads stay far below it.
     */
    public static final long MAX_RENDERED_GROWTH = 1L << 20;

    /**
     * Most digits a payload number may have as PostgreSQL prints it: 1,000, the default
     * {@code maxNumberLength} of Jackson's {@code StreamReadConstraints}, which the worker parses payloads
     * with (it counts digits, not the sign or the point). {@code 1e1000} (1,001 digits) would be stored
     * and then fail every run as "not valid JSON".
     */
    public static final long MAX_NUMBER_LENGTH = 1_000;

    /**
     * Deepest nesting of arrays and objects a payload may have: 1,000, the default {@code maxNestingDepth}
     * of Jackson's {@code StreamReadConstraints}. PostgreSQL stores deeper values (up to its stack limit),
     * which a worker could then not parse.
     */
    public static final int MAX_NESTING_DEPTH = 1_000;

    /**
     * Largest exponent, either sign, a number may be written with: 1,000,000,000. It matters only where
     * {@link #MAX_NUMBER_LENGTH} does not bite, for zero: {@code 0e2000000000} is 0, but Java's
     * {@code BigDecimal} (exponents within int range) and PostgreSQL's numeric (within ±1,073,741,823)
     * cannot even read it. Every non-zero number written with an exponent anywhere near this prints
     * with far more than 1,000 digits.
     */
    public static final long MAX_EXPONENT = 1_000_000_000L;

    private JsonNumbers() {}

    /**
     * Bytes by which the numbers in {@code json} grow when jsonb renders them, summed over the numbers
     * that grow (those that shrink, like {@code -0.0e3} to {@code 0}, count as zero). Strings are
     * skipped, escapes included. Lenient: text that is not JSON is scanned as far as it goes (the
     * database refuses it later anyway).
     *
     * @return the growth in bytes (chars of ASCII digits), never negative; saturates near
     *     {@code Long.MAX_VALUE / 4} for absurd exponents
     */
    public static long renderedGrowth(CharSequence json) {
        return measure(json).growth();
    }

    /**
     * What jsonb's rendering does to the numbers of {@code json}.
     *
     * @param growth as {@link #renderedGrowth}
     * @param mostDigits the most digits of one number as printed back (0 without numbers)
     * @param maxDepth the deepest nesting of arrays and objects (0 for a scalar)
     */
    public record Rendering(long growth, long mostDigits, int maxDepth) {}

    /** Both measures of {@code json} in one pass; lenient as {@link #renderedGrowth}. */
    public static Rendering measure(CharSequence json) {
        long growth = 0;
        long longest = 0;
        int depth = 0;
        int maxDepth = 0;
        int i = 0;
        int len = json.length();
        while (i < len) {
            char c = json.charAt(i);
            if (c == '[' || c == '{') {
                maxDepth = Math.max(maxDepth, ++depth);
                i++;
            } else if (c == ']' || c == '}') {
                depth--;
                i++;
            } else if (c == '"') {
                i = skipString(json, i + 1);
            } else if (c == '-' || (c >= '0' && c <= '9')) {
                int end = numberEnd(json, i);
                Printed printed = printed(json, i, end);
                growth = saturatingAdd(growth, Math.max(0, printed.length() - (end - i)));
                longest = Math.max(longest, printed.digits());
                i = end;
            } else {
                i++;
            }
        }
        return new Rendering(growth, longest, maxDepth);
    }

    /**
     * Why a payload is refused, or empty: it is longer than {@link Job#MAX_PAYLOAD_BYTES} of UTF-8, or it
     * could be stored but not run: its numbers would grow by more than {@link #MAX_RENDERED_GROWTH} in
     * all, one would print with more than {@link #MAX_NUMBER_LENGTH} digits, or it nests deeper than
     * {@link #MAX_NESTING_DEPTH}. The one payload check of every door (HTTP, {@code NewJob}, {@code
     * NewJobBatch}).
     *
     * @param name what to call the value in the message, e.g. "payload"
     */
    public static Optional<String> unreadablePayload(String name, CharSequence json) {
        long bytes = StoredText.utf8Length(json.toString());
        if (bytes > Job.MAX_PAYLOAD_BYTES) {
            return Optional.of(name + " is " + bytes + " bytes of JSON text (UTF-8), more than " + Job.MAX_PAYLOAD_BYTES
                    + " (1 MiB)");
        }
        Rendering r = measure(json);
        if (r.growth() > MAX_RENDERED_GROWTH) return Optional.of(tooLargeMessage(name, r.growth()));
        if (r.mostDigits() > MAX_NUMBER_LENGTH) {
            return Optional.of(name + " holds a number that PostgreSQL would print with " + r.mostDigits()
                    + " digits (at most " + MAX_NUMBER_LENGTH + "; e.g. 1e1000 prints as 1,001 digits), which a"
                    + " worker's JSON parser refuses");
        }
        if (r.maxDepth() > MAX_NESTING_DEPTH) {
            return Optional.of(name + " nests arrays and objects " + r.maxDepth() + " levels deep (at most "
                    + MAX_NESTING_DEPTH + "), which a worker's JSON parser refuses");
        }
        return Optional.empty();
    }

    /**
     * Why one JSON number literal (e.g. {@code -1.5e-7}, as written in a request) is refused, or empty:
     * PostgreSQL would print it with more than {@link #MAX_NUMBER_LENGTH} digits (so a worker's parser
     * could not read it back, and with far more digits PostgreSQL's numeric could not hold it), or it is
     * written with an exponent beyond ±{@link #MAX_EXPONENT}. This is the rule for every number jobq
     * reads from a request, in any field.
     *
     * <p>Judged from the text alone, in time linear in its length: the number is never built, so
     * {@code 1e9999999999} (an exponent beyond what Java's {@code BigDecimal} can hold) and
     * {@code 1e1000000000} (which a plain rendering would make a gigabyte long) cost no more than
     * {@code 1}. A caller that has checked a literal here can turn it into a {@code BigDecimal} and
     * compare, print or convert it cheaply.
     *
     * @param name what to call the value in the message, e.g. "delay_seconds"
     * @return a message naming {@code name} and quoting at most {@link StoredText#excerpt} of the literal
     */
    public static Optional<String> unacceptableNumber(String name, CharSequence literal) {
        Printed p = printed(literal, 0, literal.length());
        if (p.hugeExponent()) {
            return Optional.of(name + " holds the number " + StoredText.excerpt(literal) + ", whose exponent is beyond ±" + MAX_EXPONENT);
        }
        if (p.digits() > MAX_NUMBER_LENGTH) {
            return Optional.of(name + " holds the number " + StoredText.excerpt(literal) + ", which PostgreSQL would print with "
                    + p.digits() + " digits (at most " + MAX_NUMBER_LENGTH + "; a worker's JSON parser refuses more)");
        }
        return Optional.empty();
    }

    /**
     * Refuses a payload {@link #unreadablePayload} objects to.
     *
     * @throws IllegalArgumentException naming {@code name} and the reason
     */
    public static void requireReadableBack(String name, CharSequence json) {
        unreadablePayload(name, json).ifPresent(why -> {
            throw new IllegalArgumentException(why);
        });
    }

    /** The message for numbers that grow too much, for callers that report errors their own way. */
    public static String tooLargeMessage(String name, long growth) {
        return name + " holds numbers that PostgreSQL would render " + growth + " bytes longer than written (more than "
                + MAX_RENDERED_GROWTH + "; e.g. 1e131071 comes back as 131,072 digits), so it could not be read back";
    }

    private static int skipString(CharSequence s, int from) {
        int i = from;
        while (i < s.length()) {
            char c = s.charAt(i);
            if (c == '\\') {
                i += 2;
            } else if (c == '"') {
                return i + 1;
            } else {
                i++;
            }
        }
        return i;
    }

    private static int numberEnd(CharSequence s, int from) {
        int i = from;
        if (i < s.length() && s.charAt(i) == '-') i++;
        while (i < s.length()) {
            char c = s.charAt(i);
            if ((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
                i++;
            } else {
                break;
            }
        }
        return i;
    }

    /** PostgreSQL's plain rendering length of the number literal {@code s[from, end)}. */
    static long renderedLength(CharSequence s, int from, int end) {
        return printed(s, from, end).length();
    }

    /**
     * A number as PostgreSQL prints it: sign, integer digits, and digits after the point (its scale);
     * {@code hugeExponent} when written with an exponent beyond ±{@link #MAX_EXPONENT} (the digit counts
     * are then computed as if the exponent were just beyond it).
     */
    private record Printed(boolean negative, long integerDigits, long scale, boolean hugeExponent) {
        long length() {
            return (negative ? 1 : 0) + integerDigits + (scale > 0 ? 1 + scale : 0);
        }

        long digits() {
            return integerDigits + scale;
        }
    }

    private static Printed printed(CharSequence s, int from, int end) {
        int i = from;
        boolean negative = false;
        if (i < end && s.charAt(i) == '-') {
            negative = true;
            i++;
        }
        long significant = 0; // mantissa digits from the first non-zero one on
        long fraction = 0;    // mantissa digits after the point
        boolean afterPoint = false;
        for (; i < end; i++) {
            char c = s.charAt(i);
            if (c == '.') {
                afterPoint = true;
            } else if (c >= '0' && c <= '9') {
                if (significant > 0 || c != '0') significant++;
                if (afterPoint) fraction++;
            } else {
                break; // 'e' or 'E'
            }
        }
        long exponent = 0;
        if (i < end && (s.charAt(i) == 'e' || s.charAt(i) == 'E')) {
            i++;
            boolean negativeExponent = false;
            if (i < end && (s.charAt(i) == '+' || s.charAt(i) == '-')) {
                negativeExponent = s.charAt(i) == '-';
                i++;
            }
            for (; i < end; i++) {
                char c = s.charAt(i);
                if (c < '0' || c > '9') break;
                exponent = Math.min(MAX_EXPONENT + 1, exponent * 10 + (c - '0'));
            }
            if (negativeExponent) exponent = -exponent;
        }
        long shift = exponent - fraction; // value = significant digits x 10^shift
        long scale = Math.max(0, -shift);
        long integerDigits;
        if (significant == 0) {
            integerDigits = 1; // zero: "0", or "0.000" with its scale, and no sign
            negative = false;
        } else if (shift >= 0) {
            integerDigits = significant + shift;
        } else {
            integerDigits = Math.max(1, significant - scale);
        }
        return new Printed(negative, integerDigits, scale, Math.abs(exponent) > MAX_EXPONENT);
    }

    private static long saturatingAdd(long a, long b) {
        long sum = a + b;
        return sum < 0 ? Long.MAX_VALUE / 4 : sum;
    }
}
