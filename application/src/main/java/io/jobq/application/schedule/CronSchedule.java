package io.jobq.application.schedule;

import com.cronutils.model.Cron;
import com.cronutils.model.CronType;
import com.cronutils.model.definition.CronDefinitionBuilder;
import com.cronutils.model.time.ExecutionTime;
import com.cronutils.parser.CronParser;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.time.zone.ZoneOffsetTransition;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A cron expression read on a time zone's wall clock: when a schedule's ticks fall, and which one is due.
 * Parsing and matching are cron-utils'; this class adds the time zone rules and the missed-tick policy.
 *
 * <p><b>Syntax.</b> Five fields, {@code minute hour day-of-month month day-of-week} (Unix cron), or six with
 * seconds first, {@code second minute hour day-of-month month day-of-week} (Spring's). Lists, ranges, steps
 * and names ({@code MON}, {@code JAN}) as usual; day of week 0-7, both 0 and 7 Sunday; the six-field form
 * also takes {@code ?}, {@code L}, {@code W} and {@code #}. At most {@value #MAX_LENGTH} characters.
 *
 * <p><b>Daylight saving.</b> Each wall-clock tick fires once. A tick that a spring-forward change skips (02:30
 * on the night Europe/Berlin goes from +01:00 to +02:00) fires at the same distance past the gap's end
 * (03:30), so a daily job still runs that day; ticks that then land on one instant are one tick. A tick that a
 * fall-back change repeats fires once, at its first occurrence (the earlier offset). Fixed zones such as
 * {@code UTC} have neither.
 *
 * <p><b>Missed ticks</b> ({@link #dueTick}): only the latest tick that is due fires; earlier ones missed while
 * no worker ran are skipped. After an outage a schedule runs once, not once per missed tick.
 *
 * <p>Immutable and thread-safe.
 */
public final class CronSchedule {
    /** Longest expression accepted, in characters. */
    public static final int MAX_LENGTH = 200;
    /** Bound on the steps one lookup takes across merged or repeated wall-clock ticks (a DST change is at most hours). */
    private static final int MAX_STEPS = 10_000;
    /**
     * How far from a time-zone change wall-clock order and instant order may differ: changes move clocks by
     * at most 2 hours. Near one, lookups compare every tick within this distance (a 1-second schedule: about
     * 20,000 ticks a lookup, for a few hours twice a year).
     */
    private static final Duration NEAR_A_CHANGE = Duration.ofHours(3);
    private static final int MAX_CAREFUL_STEPS = 100_000;
    /**
     * The last instant after which {@link #nextAfter} looks for a tick: java.time places nothing past year
     * 999,999,999 in any zone, and a last tick of {@code infinity} written by hand reads as year 1,000,000,000.
     */
    private static final Instant LAST_PLACEABLE = LocalDateTime.of(999_999_998, 1, 1, 0, 0).toInstant(ZoneOffset.UTC);

    private static final CronParser FIVE_FIELDS = new CronParser(CronDefinitionBuilder.instanceDefinitionFor(CronType.UNIX));
    private static final CronParser SIX_FIELDS = new CronParser(CronDefinitionBuilder.instanceDefinitionFor(CronType.SPRING53));

    private final String expression;
    private final ZoneId zone;
    private final ExecutionTime times;

    private CronSchedule(String expression, ZoneId zone, ExecutionTime times) {
        this.expression = expression;
        this.zone = zone;
        this.times = times;
    }

    /**
     * Parses {@code expression} for {@code zone}, for a new schedule: also looks ticks up across two years
     * (48 lookups), so that what is accepted here never fails when fired.
     *
     * @throws IllegalArgumentException with a message starting "cron": not 5 or 6 fields, a value out of range,
     *     longer than {@value #MAX_LENGTH} characters, or an expression that never fires ({@code 0 0 30 2 *}) or
     *     that cron-utils cannot place in some month ({@code 0 0 0 31W * ?})
     */
    public static CronSchedule parse(String expression, ZoneId zone) {
        CronSchedule schedule = read(expression, zone);
        schedule.probe();
        return schedule;
    }

    /**
     * Reads a stored expression, which {@link #parse} accepted when it was set: the syntax checks only, without
     * {@link #parse}'s lookups (readers read every schedule, often). One edited by hand since may still fail at
     * a lookup ({@link IllegalStateException}), which its readers handle.
     *
     * @throws IllegalArgumentException as {@link #parse}, for the syntax
     */
    public static CronSchedule read(String expression, ZoneId zone) {
        Objects.requireNonNull(expression, "cron");
        Objects.requireNonNull(zone, "timezone");
        String text = expression.strip();
        if (text.isEmpty()) throw new IllegalArgumentException("cron must not be empty");
        // cron-utils reads other digits too (Arabic-Indic, full-width) and PostgreSQL cannot store NUL
        if (!text.chars().allMatch(c -> c >= 0x20 && c < 0x7f)) {
            throw new IllegalArgumentException("cron must be printable ASCII (digits 0-9, letters, * / , - ? L W # and spaces)");
        }
        if (text.length() > MAX_LENGTH) {
            throw new IllegalArgumentException("cron must be at most " + MAX_LENGTH + " characters, was " + text.length());
        }
        int fields = text.split("\\s+").length;
        CronParser parser = switch (fields) {
            case 5 -> FIVE_FIELDS;
            case 6 -> SIX_FIELDS;
            default -> throw new IllegalArgumentException("cron must have 5 fields (minute hour day-of-month month"
                    + " day-of-week) or 6 (second first), had " + fields);
        };
        ExecutionTime times;
        try {
            Cron cron = parser.parse(text);
            cron.validate();
            times = ExecutionTime.forCron(cron);
        } catch (RuntimeException e) { // cron-utils signals bad input with several unchecked types
            throw new IllegalArgumentException("cron is not valid: " + e.getMessage(), e);
        }
        return new CronSchedule(text, zone, times);
    }

    /**
     * Looks ticks up from every month of a common and of a leap year: cron-utils accepts some expressions
     * it later fails to place in some months ({@code 0 0 0 31W * ?} in February), and a schedule that parses
     * must never fail when fired.
     *
     * @throws IllegalArgumentException "cron never fires" or "cron is not supported"
     */
    private void probe() {
        boolean fires = false;
        try {
            for (int year : new int[] {2026, 2028}) {
                for (int month = 1; month <= 12; month++) {
                    for (int day : new int[] {1, 28}) {
                        Instant at = LocalDateTime.of(year, month, day, 12, 0).atZone(zone).toInstant();
                        fires |= nextAfter(at).isPresent();
                        latestAtOrBefore(at);
                    }
                }
            }
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("cron is not supported: " + expression + " (" + e.getMessage() + ")", e);
        }
        if (!fires) throw new IllegalArgumentException("cron never fires: " + expression);
    }

    /**
     * A time zone by its IANA name ({@code Europe/Berlin}) or offset ({@code UTC}, {@code +02:00}).
     *
     * @throws IllegalArgumentException naming {@code timezone} if the id is unknown
     */
    public static ZoneId zone(String id) {
        Objects.requireNonNull(id, "timezone");
        try {
            return ZoneId.of(id);
        } catch (DateTimeException e) {
            throw new IllegalArgumentException("timezone must be an IANA zone such as Europe/Berlin or an offset such"
                    + " as UTC or +02:00: " + e.getMessage(), e);
        }
    }

    /** The expression as given, without surrounding blanks. */
    public String expression() {
        return expression;
    }

    public ZoneId zone() {
        return zone;
    }

    /**
     * The first tick strictly after {@code after}, or empty if the expression has no later tick (a
     * year-bounded one, say) or {@code after} is past any tick java.time can place (year 999,999,998).
     *
     * @throws IllegalStateException if cron-utils fails to place a tick (never for a schedule that {@link #parse}d)
     */
    public Optional<Instant> nextAfter(Instant after) {
        if (after.isAfter(LAST_PLACEABLE)) return Optional.empty();
        Optional<Instant> inWallOrder = nextInWallOrder(after);
        Instant horizon = inWallOrder.orElse(after).plus(NEAR_A_CHANGE);
        if (!changeBetween(after.minus(NEAR_A_CHANGE), horizon)) return inWallOrder;
        // Near a change a tick moved past a gap can fall after later wall-clock ticks: take the least instant.
        Instant best = inWallOrder.orElse(null);
        for (LocalDateTime wall : wallTicks(after.minus(NEAR_A_CHANGE), horizon)) {
            Instant tick = instantOf(wall);
            if (tick.isAfter(after) && (best == null || tick.isBefore(best))) best = tick;
        }
        return Optional.ofNullable(best);
    }

    /** The latest tick at or before {@code at}, or empty if there is none. Errors as {@link #nextAfter}. */
    public Optional<Instant> latestAtOrBefore(Instant at) {
        Optional<Instant> inWallOrder = latestInWallOrder(at);
        Instant from = inWallOrder.orElse(at).minus(NEAR_A_CHANGE);
        if (!changeBetween(from, at.plus(NEAR_A_CHANGE))) return inWallOrder;
        // Near a change (the repeated hour's second pass, a gap that is not a whole hour) take the greatest instant.
        Instant best = inWallOrder.orElse(null);
        for (LocalDateTime wall : wallTicks(from, at.plus(NEAR_A_CHANGE))) {
            Instant tick = instantOf(wall);
            if (!tick.isAfter(at) && (best == null || tick.isAfter(best))) best = tick;
        }
        return Optional.ofNullable(best);
    }

    private boolean changeBetween(Instant from, Instant to) {
        ZoneOffsetTransition next = zone.getRules().nextTransition(from);
        return next != null && !next.getInstant().isAfter(to);
    }

    /** The wall-clock ticks between the wall-clock readings of two instants (at most {@value #MAX_CAREFUL_STEPS}). */
    private List<LocalDateTime> wallTicks(Instant from, Instant to) {
        LocalDateTime cursor = from.atZone(zone).toLocalDateTime().truncatedTo(ChronoUnit.SECONDS);
        LocalDateTime end = to.atZone(zone).toLocalDateTime();
        List<LocalDateTime> out = new ArrayList<>();
        for (int step = 0; step < MAX_CAREFUL_STEPS; step++) {
            Optional<ZonedDateTime> next = next(cursor);
            if (next.isEmpty() || next.get().toLocalDateTime().isAfter(end)) break;
            cursor = next.get().toLocalDateTime();
            out.add(cursor);
        }
        return out;
    }

    /** The first tick after {@code after} walking wall-clock ticks in order: exact away from time-zone changes. */
    private Optional<Instant> nextInWallOrder(Instant after) {
        ZonedDateTime at = after.atZone(zone);
        LocalDateTime cursor = at.toLocalDateTime().truncatedTo(ChronoUnit.SECONDS); // ticks fall on whole seconds
        ZoneOffsetTransition change = zone.getRules().getTransition(cursor);
        if (change != null && change.isOverlap() && at.getOffset().equals(change.getOffsetAfter())) {
            // the repeated hour's second pass: its wall-clock ticks fired in the first pass
            cursor = change.getDateTimeBefore().minusNanos(1);
        }
        for (int step = 0; step < MAX_STEPS; step++) {
            Optional<ZonedDateTime> next = next(cursor);
            if (next.isEmpty()) return Optional.empty();
            cursor = next.get().toLocalDateTime();
            Instant tick = instantOf(cursor);
            if (tick.isAfter(after)) return Optional.of(tick);
        }
        return Optional.empty();
    }

    /** The latest tick at or before {@code at} walking wall-clock ticks back: exact away from time-zone changes. */
    private Optional<Instant> latestInWallOrder(Instant at) {
        // cron-utils looks strictly before its argument, at whole seconds: one second on, a tick exactly at `at` counts
        LocalDateTime cursor = at.atZone(zone).toLocalDateTime().truncatedTo(ChronoUnit.SECONDS).plusSeconds(1);
        for (int step = 0; step < MAX_STEPS; step++) {
            Optional<ZonedDateTime> last = last(cursor);
            if (last.isEmpty()) return Optional.empty();
            cursor = last.get().toLocalDateTime();
            Instant tick = instantOf(cursor);
            if (!tick.isAfter(at)) return Optional.of(tick);
        }
        return Optional.empty();
    }

    /**
     * The missed-tick policy: the tick to fire now, given that the schedule has fired (or was last
     * changed) at {@code since}: the latest tick in {@code (since, now]}, or empty if none is due. Earlier
     * due ticks are skipped, so a schedule fires once after an outage, not once per missed tick.
     */
    public Optional<Instant> dueTick(Instant since, Instant now) {
        return latestAtOrBefore(now).filter(tick -> tick.isAfter(since));
    }

    /** cron-utils' next wall-clock tick after {@code wall}; its failures (a date it cannot place) as IllegalStateException. */
    private Optional<ZonedDateTime> next(LocalDateTime wall) {
        try {
            return times.nextExecution(wall.atZone(ZoneOffset.UTC));
        } catch (RuntimeException e) {
            throw new IllegalStateException("cron-utils could not find the tick of " + expression + " after " + wall + ": "
                    + e.getMessage(), e);
        }
    }

    private Optional<ZonedDateTime> last(LocalDateTime wall) {
        try {
            return times.lastExecution(wall.atZone(ZoneOffset.UTC));
        } catch (RuntimeException e) {
            throw new IllegalStateException("cron-utils could not find the tick of " + expression + " before " + wall + ": "
                    + e.getMessage(), e);
        }
    }

    /** A wall-clock time as an instant: a time in a gap moves forward by the gap's length, a repeated one takes the earlier offset. */
    private Instant instantOf(LocalDateTime wallClock) {
        return ZonedDateTime.ofLocal(wallClock, zone, null).toInstant();
    }

    @Override
    public String toString() {
        return expression + " (" + zone + ")";
    }
}
