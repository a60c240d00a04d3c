package io.jobq.http;

import io.jobq.application.port.FinishedCount;
import io.jobq.domain.job.JobState;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The dashboard's chart as inline SVG, drawn on the server so the page needs no script: per minute over the
 * last {@value BacklogHistory#MINUTES} minutes, bars of jobs finished (done in green, dead or cancelled in red,
 * left scale, jobs per minute) and a line of jobs waiting (queued and held, right scale) where samples exist.
 * The SVG holds numbers and times only, never a name, so it is inserted into the page unescaped.
 */
final class DashboardChart {
    private static final int WIDTH = 760;
    private static final int HEIGHT = 200;
    private static final int LEFT = 64;
    private static final int RIGHT = 96;
    private static final int TOP = 12;
    private static final int BOTTOM = 24;
    private static final DateTimeFormatter HOUR_MINUTE = DateTimeFormatter.ofPattern("HH:mm", Locale.ROOT).withZone(ZoneOffset.UTC);

    private DashboardChart() {}

    /**
     * @param finished finished jobs per minute (any queues, summed here)
     * @param waiting jobs waiting at each sampled minute; may be empty (no backlog line)
     * @param now the chart's right edge (its minute is the last slot)
     */
    static String svg(List<FinishedCount> finished, Map<Instant, Long> waiting, Instant now) {
        int slots = BacklogHistory.MINUTES + 1;
        Instant first = now.truncatedTo(ChronoUnit.MINUTES).minus(Duration.ofMinutes(BacklogHistory.MINUTES));
        long[] done = new long[slots];
        long[] failed = new long[slots];
        for (FinishedCount c : finished) {
            int i = slot(first, c.minute(), slots);
            if (i < 0) continue;
            if (c.state() == JobState.DONE) done[i] += c.count();
            else failed[i] += c.count();
        }
        Long[] backlog = new Long[slots];
        waiting.forEach((minute, n) -> {
            int i = slot(first, minute, slots);
            if (i >= 0) backlog[i] = n;
        });
        long mostFinished = 0;
        long mostWaiting = 0;
        for (int i = 0; i < slots; i++) {
            mostFinished = Math.max(mostFinished, done[i] + failed[i]);
            if (backlog[i] != null) mostWaiting = Math.max(mostWaiting, backlog[i]);
        }
        // the scales: the busiest minute at the top (1 when all are 0, so nothing is divided by 0)
        long maxFinished = Math.max(1, mostFinished);
        long maxWaiting = Math.max(1, mostWaiting);
        double plotW = WIDTH - LEFT - RIGHT;
        double plotH = HEIGHT - TOP - BOTTOM;
        double slotW = plotW / slots;
        StringBuilder svg = new StringBuilder(8_192);
        svg.append("<svg class=\"chart\" role=\"img\" aria-label=\"jobs finished per minute and jobs waiting\" viewBox=\"0 0 ")
                .append(WIDTH).append(' ').append(HEIGHT).append("\" xmlns=\"http://www.w3.org/2000/svg\">");
        svg.append(line(LEFT, TOP + plotH, LEFT + plotW, TOP + plotH, "#999"));
        for (int i = 0; i < slots; i++) {
            double x = LEFT + i * slotW + 1;
            double hDone = plotH * done[i] / maxFinished;
            double hFailed = plotH * failed[i] / maxFinished;
            if (done[i] > 0) svg.append(rect(x, TOP + plotH - hDone, slotW - 2, hDone, "#3a8f4b", done[i] + " done"));
            if (failed[i] > 0) svg.append(rect(x, TOP + plotH - hDone - hFailed, slotW - 2, hFailed, "#c0392b", failed[i] + " dead or cancelled"));
        }
        List<String> points = new ArrayList<>();
        for (int i = 0; i <= slots; i++) {
            if (i < slots && backlog[i] != null) {
                double x = LEFT + (i + 0.5) * slotW;
                double y = TOP + plotH - plotH * backlog[i] / maxWaiting;
                points.add(String.format(Locale.ROOT, "%.1f,%.1f", x, y));
                svg.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"#2c6fbb\"><title>%d waiting</title></circle>", x, y, backlog[i]));
            } else if (!points.isEmpty()) { // a minute without a sample ends the line: no invented values
                svg.append("<polyline fill=\"none\" stroke=\"#2c6fbb\" stroke-width=\"2\" points=\"").append(String.join(" ", points)).append("\"/>");
                points.clear();
            }
        }
        svg.append(text(LEFT - 4, TOP + 10, "end", mostFinished + "/min"));
        svg.append(text(LEFT - 4, TOP + plotH, "end", "0"));
        if (!waiting.isEmpty()) {
            svg.append(text(LEFT + plotW + 4, TOP + 10, "start", mostWaiting + " waiting"));
            svg.append(text(LEFT + plotW + 4, TOP + plotH, "start", "0"));
        }
        svg.append(text(LEFT, HEIGHT - 6, "start", HOUR_MINUTE.format(first) + " UTC"));
        svg.append(text(LEFT + plotW, HEIGHT - 6, "end", HOUR_MINUTE.format(first.plus(Duration.ofMinutes(slots - 1))) + " UTC"));
        return svg.append("</svg>").toString();
    }

    private static int slot(Instant first, Instant minute, int slots) {
        long i = Duration.between(first, minute.truncatedTo(ChronoUnit.MINUTES)).toMinutes();
        return i >= 0 && i < slots ? (int) i : -1;
    }

    private static String rect(double x, double y, double w, double h, String fill, String title) {
        return String.format(Locale.ROOT, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>%s</title></rect>",
                x, y, Math.max(w, 1), h, fill, title);
    }

    private static String line(double x1, double y1, double x2, double y2, String stroke) {
        return String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>", x1, y1, x2, y2, stroke);
    }

    private static String text(double x, double y, String anchor, String text) {
        return String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"11\" fill=\"#555\">%s</text>", x, y, anchor, text);
    }
}
