package io.jobq.postgres;

import io.jobq.domain.job.StoredText;

/**
 * Makes JSON text storable as jsonb. jsonb refuses the escape {@code \u0000} and lone surrogate
 * escapes ({@code \ud800}); a handler's result must still be stored (sanitised), never refused, or the
 * job would stay running until its lease lapses. Decoded characters pass through
 * {@link StoredText#clean}; escapes are rewritten to {@code \ufffd}.
 */
final class JsonText {
    private JsonText() {}

    /** {@code json} with NUL and lone-surrogate escapes and characters replaced by U+FFFD. */
    static String storable(String json) {
        String cleaned = StoredText.clean(json);
        if (cleaned.indexOf('\\') < 0) return cleaned;
        StringBuilder out = new StringBuilder(cleaned.length());
        int i = 0;
        while (i < cleaned.length()) {
            char c = cleaned.charAt(i);
            if (c != '\\' || i + 1 >= cleaned.length()) {
                out.append(c);
                i++;
                continue;
            }
            char next = cleaned.charAt(i + 1);
            if (next != 'u' || i + 6 > cleaned.length()) {
                out.append(c).append(next); // \\ \" \n …: keep the pair, so an escaped backslash is never read as an escape
                i += 2;
                continue;
            }
            int unit = parseHex(cleaned, i + 2);
            if (unit < 0) {
                out.append(cleaned, i, i + 2);
                i += 2;
                continue;
            }
            boolean bad = unit == 0;
            int consumed = 6;
            if (Character.isHighSurrogate((char) unit)) {
                int low = i + 12 <= cleaned.length() && cleaned.charAt(i + 6) == '\\' && cleaned.charAt(i + 7) == 'u'
                        ? parseHex(cleaned, i + 8) : -1;
                if (low >= 0 && Character.isLowSurrogate((char) low)) {
                    out.append(cleaned, i, i + 12);
                    i += 12;
                    continue;
                }
                bad = true;
            } else if (Character.isLowSurrogate((char) unit)) {
                bad = true;
            }
            out.append(bad ? "\\ufffd" : cleaned.substring(i, i + consumed));
            i += consumed;
        }
        return out.toString();
    }

    private static int parseHex(String s, int from) {
        if (from + 4 > s.length()) return -1;
        int v = 0;
        for (int k = from; k < from + 4; k++) {
            int d = Character.digit(s.charAt(k), 16);
            if (d < 0) return -1;
            v = v * 16 + d;
        }
        return v;
    }
}
