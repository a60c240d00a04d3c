package io.jobq.application.schedule;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class CronScheduleTest {
    private static final ZoneId UTC = ZoneOffset.UTC;
    private static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");

    @ParameterizedTest(name = "{0} in {1} after {2} -> {3}")
    @CsvSource({
            "'* * * * *',        UTC,              2026-12-01T10:00:30Z,  2026-12-01T10:01:00Z",
            "'* * * * * *',      UTC,              2026-12-01T10:00:00.5Z, 2026-12-01T10:00:01Z",
            "'0 9 * * MON-FRI',  UTC,              2026-12-04T09:00:00Z,  2026-12-07T09:00:00Z",
            // New York's 09:00 is 14:00 UTC in winter and 13:00 UTC in summer
            "'0 9 * * *',        America/New_York, 2026-12-01T15:00:00Z,  2026-12-02T14:00:00Z",
            "'0 9 * * *',        America/New_York, 2027-07-01T15:00:00Z,  2027-07-02T13:00:00Z",
            // spring forward in Berlin (2027-03-28 02:00 +01:00 -> 03:00 +02:00): 02:30 moves to 03:30 +02:00
            "'0 30 2 * * *',     Europe/Berlin,    2027-03-27T12:00:00Z,  2027-03-28T01:30:00Z",
            // fall back (2026-10-25 03:00 +02:00 -> 02:00 +01:00): 02:30 fires at its first occurrence only
            "'0 30 2 * * *',     Europe/Berlin,    2026-10-24T12:00:00Z,  2026-10-25T00:30:00Z",
            "'0 30 2 * * *',     Europe/Berlin,    2026-10-25T00:30:00Z,  2026-10-26T01:30:00Z",
    })
    void nextTick(String cron, String zone, Instant after, Instant expected) {
        assertThat(CronSchedule.parse(cron, ZoneId.of(zone)).nextAfter(after)).contains(expected);
    }

    @Test
    void nothingComesAfterALastTickOfInfinityOrNearTheEndOfTime() {
        CronSchedule everySecond = CronSchedule.parse("* * * * * *", BERLIN);
        assertThat(everySecond.nextAfter(java.time.OffsetDateTime.MAX.toInstant())).isEmpty();
        assertThat(everySecond.nextAfter(Instant.MAX)).isEmpty();
    }

    @Test
    void aRepeatedHourFiresItsWallClockTicksOnce() {
        // half-hourly across the fall-back night: 01:30, 02:00, 02:30 at +02:00, then 03:00 at +01:00;
        // the second pass of 02:00 and 02:30 (+01:00) is not fired again
        CronSchedule halfHourly = CronSchedule.parse("*/30 * * * *", BERLIN);
        assertThat(ticks(halfHourly, Instant.parse("2026-10-24T23:00:00Z"), 4)).containsExactly(
                Instant.parse("2026-10-24T23:30:00Z"), Instant.parse("2026-10-25T00:00:00Z"),
                Instant.parse("2026-10-25T00:30:00Z"), Instant.parse("2026-10-25T02:00:00Z"));
    }

    @Test
    void ticksInASkippedHourMoveAfterItAndMergeWithTheTicksThere() {
        // half-hourly across the spring-forward night: 02:00 and 02:30 +01:00 do not exist; they become 03:00 and
        // 03:30 +02:00, which are also ticks of their own: each instant fires once
        CronSchedule halfHourly = CronSchedule.parse("*/30 * * * *", BERLIN);
        assertThat(ticks(halfHourly, Instant.parse("2027-03-28T00:00:00Z"), 4)).containsExactly(
                Instant.parse("2027-03-28T00:30:00Z"), Instant.parse("2027-03-28T01:00:00Z"),
                Instant.parse("2027-03-28T01:30:00Z"), Instant.parse("2027-03-28T02:00:00Z"));
    }

    @Test
    void aGapThatIsNotAWholeHourLosesNoTick() {
        // Lord Howe Island moves from +10:30 to +11:00 at 02:00 (2026-10-04): 02:00 and 02:20 fall in the gap and
        // move to 02:30 and 02:50, around the real 02:40; all three fire, in instant order
        CronSchedule at20s = CronSchedule.parse("*/20 2 * * *", ZoneId.of("Australia/Lord_Howe"));
        assertThat(ticks(at20s, Instant.parse("2026-10-03T12:00:00Z"), 3)).containsExactly(
                Instant.parse("2026-10-03T15:30:00Z"), Instant.parse("2026-10-03T15:40:00Z"), Instant.parse("2026-10-03T15:50:00Z"));
        assertThat(at20s.latestAtOrBefore(Instant.parse("2026-10-03T15:45:00Z"))).contains(Instant.parse("2026-10-03T15:40:00Z"));
    }

    @Test
    void inTheRepeatedHourTheLatestTickIsTheLatestInstantNotTheLatestWallClockTime() {
        // at 01:20Z it is 02:20 in the repeated hour's second pass; the latest tick fired is 02:45 of the first (00:45Z)
        CronSchedule quarterly = CronSchedule.parse("*/15 * * * *", BERLIN);
        assertThat(quarterly.latestAtOrBefore(Instant.parse("2024-10-27T01:20:00Z"))).contains(Instant.parse("2024-10-27T00:45:00Z"));
        // so workers back at 01:20Z after an outage since 00:00Z fire one tick, not three
        assertThat(quarterly.dueTick(Instant.parse("2024-10-27T00:00:00Z"), Instant.parse("2024-10-27T01:20:00Z")))
                .contains(Instant.parse("2024-10-27T00:45:00Z"));
    }

    @Test
    void theLatestTickCountsATickExactlyAtNow() {
        CronSchedule everyMinute = CronSchedule.parse("* * * * *", UTC);
        assertThat(everyMinute.latestAtOrBefore(Instant.parse("2026-12-01T10:01:00Z"))).contains(Instant.parse("2026-12-01T10:01:00Z"));
        assertThat(everyMinute.latestAtOrBefore(Instant.parse("2026-12-01T10:01:59.999Z"))).contains(Instant.parse("2026-12-01T10:01:00Z"));
        // at 03:10 on the spring-forward day, today's 02:30 (moved to 03:30) is not due yet: yesterday's is the latest
        assertThat(CronSchedule.parse("30 2 * * *", BERLIN).latestAtOrBefore(Instant.parse("2027-03-28T01:10:00Z")))
                .contains(Instant.parse("2027-03-27T01:30:00Z"));
    }

    @Test
    void afterAnOutageOnlyTheLatestMissedTickIsDue() {
        CronSchedule everyMinute = CronSchedule.parse("* * * * *", UTC);
        Instant lastFired = Instant.parse("2026-12-01T10:00:00Z");
        // five ticks missed (10:01-10:05): one fires, the latest
        assertThat(everyMinute.dueTick(lastFired, Instant.parse("2026-12-01T10:05:30Z"))).contains(Instant.parse("2026-12-01T10:05:00Z"));
        // nothing new since the last fire
        assertThat(everyMinute.dueTick(lastFired, Instant.parse("2026-12-01T10:00:59Z"))).isEmpty();
        assertThat(everyMinute.dueTick(Instant.parse("2026-12-01T10:05:00Z"), Instant.parse("2026-12-01T10:05:00Z"))).isEmpty();
    }

    @ParameterizedTest(name = "[{0}] -> {1}")
    @CsvSource({
            "'',                  cron must not be empty",
            "'* * *',             cron must have 5 fields",
            "'* * * * * * *',     cron must have 5 fields",
            "'61 * * * *',        cron is not valid",
            "'0 0 * * 8',         cron is not valid",
            "'@daily',            cron must have 5 fields",
            "'a b c d e',         cron is not valid",
            "'0 0 30 2 *',        cron never fires",
            "'\u0663 * * * *',         cron must be printable ASCII",
            "'0 0 * * *\u0000',      cron must be printable ASCII",
            // cron-utils parses it, then cannot place the 31st's weekday in a month without one
            "'0 0 0 31W * ?',     cron is not supported",
    })
    void badExpressionsAreRefusedNamingCron(String cron, String message) {
        assertThatThrownBy(() -> CronSchedule.parse(cron, UTC)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith(message);
    }

    @Test
    void tooLongAnExpressionIsRefused() {
        assertThatThrownBy(() -> CronSchedule.parse("0 ".repeat(101) + "*", UTC)).hasMessageStartingWith("cron must be at most 200");
    }

    @Test
    void anUnknownZoneIsRefusedNamingTimezone() {
        assertThatThrownBy(() -> CronSchedule.zone("Mars/Olympus_Mons")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("timezone must be");
        assertThat(CronSchedule.zone("+02:00")).isEqualTo(ZoneOffset.ofHours(2));
    }

    @Test
    void randomTextIsEitherAScheduleOrAnIllegalArgument() {
        Random random = new Random(42);
        String[] tokens = {"*", "*/5", "1", "0-3", "1,2", "MON", "JAN-DEC", "L", "?", "W", "15W", "1#2", "#", "x", "99",
                "-1", "5/0", "*/", ",", "\u0000", "\u00e9", "1-", "7-1", "0/1", "59", "12"};
        int parsed = 0;
        for (int i = 0; i < 5_000; i++) {
            StringBuilder text = new StringBuilder();
            int fields = 5 + random.nextInt(2);
            for (int f = 0; f < fields; f++) {
                if (f > 0) text.append(' ');
                text.append(tokens[random.nextInt(tokens.length)]);
            }
            try {
                CronSchedule s = CronSchedule.parse(text.toString(), UTC);
                parsed++;
                assertThat(s.nextAfter(Instant.parse("2026-12-01T00:00:00Z"))).isPresent();
            } catch (IllegalArgumentException refused) {
                assertThat(refused.getMessage()).startsWith("cron");
            }
        }
        assertThat(parsed).as("some random expressions are valid").isPositive();
    }

    private static List<Instant> ticks(CronSchedule schedule, Instant from, int n) {
        List<Instant> out = new ArrayList<>();
        Instant at = from;
        for (int i = 0; i < n; i++) {
            Optional<Instant> next = schedule.nextAfter(at);
            out.add(next.orElseThrow());
            at = next.get();
        }
        return out;
    }
}
