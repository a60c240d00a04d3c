package io.jobq.application.config;

import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parsers for configuration text, shared by the launcher's settings and {@link
 * io.jobq.application.worker.HandlerSettings} so an operator writes a duration or a flag the same way
 * everywhere. Each throws IllegalArgumentException with a message that says what was expected (never
 * the value: the caller knows whether it may be shown).
 */
public final class ConfigValue {
    private ConfigValue() {}

    private static final Pattern DURATION = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(ms|s|m|h)?");

    /**
     * {@code 500ms}, {@code 30s}, {@code 2m}, {@code 1h}, a bare number of seconds ({@code 30}), or
     * ISO-8601 ({@code PT30S}).
     */
    public static Duration duration(String text) {
        String t = text.strip().toLowerCase(Locale.ROOT);
        if (t.startsWith("pt")) {
            try {
                return requireNonNegative(Duration.parse(text.strip()));
            } catch (RuntimeException e) {
                throw new IllegalArgumentException("expected a duration like 30s, 500ms, 2m or PT30S");
            }
        }
        Matcher m = DURATION.matcher(t);
        if (!m.matches()) throw new IllegalArgumentException("expected a duration like 30s, 500ms, 2m or PT30S");
        double amount = Double.parseDouble(m.group(1));
        String unit = m.group(2) == null ? "s" : m.group(2);
        double millis = switch (unit) {
            case "ms" -> amount;
            case "s" -> amount * 1_000;
            case "m" -> amount * 60_000;
            default -> amount * 3_600_000;
        };
        if (millis > Duration.ofDays(365).toMillis()) throw new IllegalArgumentException("must be at most 365 days");
        return Duration.ofMillis(Math.round(millis));
    }

    /** The largest whole unit, as {@link #duration} reads it back: 2h, 15m, 5s, 1500ms. */
    public static String text(Duration d) {
        long ms = d.toMillis();
        if (ms == 0) return "0s";
        if (ms % 3_600_000 == 0) return ms / 3_600_000 + "h";
        if (ms % 60_000 == 0) return ms / 60_000 + "m";
        if (ms % 1_000 == 0) return ms / 1_000 + "s";
        return ms + "ms";
    }

    private static Duration requireNonNegative(Duration d) {
        if (d.isNegative()) throw new IllegalArgumentException("must not be negative");
        return d;
    }

    /** A decimal integer in [min, max]. */
    public static int integer(String text, int min, int max) {
        long v;
        try {
            v = Long.parseLong(text.strip());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("expected an integer from " + min + " to " + max);
        }
        if (v < min || v > max) throw new IllegalArgumentException("must be from " + min + " to " + max);
        return (int) v;
    }

    /** {@code true}/{@code false}, also {@code 1}/{@code 0}, {@code yes}/{@code no}, {@code on}/{@code off}. */
    public static boolean bool(String text) {
        return switch (text.strip().toLowerCase(Locale.ROOT)) {
            case "true", "1", "yes", "on" -> true;
            case "false", "0", "no", "off" -> false;
            default -> throw new IllegalArgumentException("expected true or false");
        };
    }
}
