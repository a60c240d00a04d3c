package io.jobq.bench;

import java.util.Locale;

/** How the report writes numbers: the seed's style ("6.4 ms", "610 ms", "7.11 s", "1,363"). */
public final class Format {
    private Format() {}

    /**
     * A span given in milliseconds: below 10 ms with one decimal ("6.4 ms"), below 1 s whole
     * milliseconds ("610 ms"), from 1 s on seconds with two decimals ("7.11 s").
     */
    public static String millis(double ms) {
        if (ms < 10) return String.format(Locale.ROOT, "%.1f ms", ms);
        if (ms < 1000) return String.format(Locale.ROOT, "%.0f ms", ms);
        return String.format(Locale.ROOT, "%.2f s", ms / 1000.0);
    }

    /** Seconds with one decimal: "11.2 s". */
    public static String seconds(double s) {
        return String.format(Locale.ROOT, "%.1f s", s);
    }

    /** A rate rounded to a whole number with thousands separators: "1,363". */
    public static String rate(double perSecond) {
        return String.format(Locale.ROOT, "%,d", Math.round(perSecond));
    }

    /** A count with thousands separators: "20,000". */
    public static String count(long n) {
        return String.format(Locale.ROOT, "%,d", n);
    }

    /** A ratio as a whole percentage: 0.874 → "87%". */
    public static String percent(double ratio) {
        return String.format(Locale.ROOT, "%.0f%%", ratio * 100);
    }

    /** A ratio of two rates with two decimals: 1.234 → "1.23×". */
    public static String ratio(double r) {
        return String.format(Locale.ROOT, "%.2f×", r);
    }
}
