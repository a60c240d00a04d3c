package io.jobq.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** PUT, GET and DELETE /schedules: definitions over HTTP, and every field's refusal named. */
class ScheduleRoutesTest extends ApiTestCase {
    private static final String NIGHTLY = """
            {"cron": "30 2 * * *", "task": "report", "payload": {"kind": "sales"}, "tenant": "acme",
             "timezone": "Europe/Berlin", "max_attempts": 3}""";

    @Test
    void aScheduleIsCreatedReadListedReplacedAndDeleted() {
        ApiClient.Reply created = f.client().put("/schedules/nightly", NIGHTLY);
        assertThat(created.status()).as(created.toString()).isEqualTo(201);
        assertThat(created.json().get("name").asText()).isEqualTo("nightly");
        assertThat(created.json().get("cron").asText()).isEqualTo("30 2 * * *");
        assertThat(created.json().get("timezone").asText()).isEqualTo("Europe/Berlin");
        assertThat(created.json().at("/payload/kind").asText()).isEqualTo("sales");
        assertThat(created.json().get("queue").asText()).isEqualTo("default");
        assertThat(created.json().get("max_attempts").asInt()).isEqualTo(3);
        long revision = created.json().get("revision").asLong();
        assertThat(revision).isPositive();
        assertThat(created.json().get("last_tick").isNull()).isTrue();
        Instant next = Instant.parse(created.json().get("next_tick").asText());
        assertThat(next).isAfter(Instant.now()).isBefore(Instant.now().plusSeconds(26 * 3600));
        assertThat(created.json().has("warning")).as("no worker runs 'report'").isTrue();

        ApiClient.Reply replaced = f.client().put("/schedules/nightly", "{\"cron\": \"*/10 * * * * *\", \"task\": \"report\"}");
        assertThat(replaced.status()).as(replaced.toString()).isEqualTo(200);
        assertThat(replaced.json().get("revision").asLong()).isGreaterThan(revision);
        assertThat(replaced.json().get("timezone").asText()).as("the default").isEqualTo("UTC");
        assertThat(replaced.json().get("tenant").asText()).isEqualTo("default");

        assertThat(f.client().get("/schedules/nightly").json().get("cron").asText()).isEqualTo("*/10 * * * * *");
        f.client().put("/schedules/a-first", "{\"cron\": \"0 0 * * *\", \"task\": \"t\"}");
        ApiClient.Reply list = f.client().get("/schedules");
        assertThat(list.json().get("schedules")).extracting(n -> n.get("name").asText()).containsExactly("a-first", "nightly");

        assertThat(f.client().method("DELETE", "/schedules/nightly").status()).isEqualTo(204);
        ApiClient.Reply gone = f.client().get("/schedules/nightly");
        assertThat(gone.status()).isEqualTo(404);
        assertThat(gone.json().at("/error/code").asText()).isEqualTo("schedule_not_found");
        assertThat(f.client().method("DELETE", "/schedules/nightly").status()).isEqualTo(404);
    }

    @Test
    void theListingPagesByNameAndNamesABadQueryParameter() {
        for (String name : new String[] {"c", "a", "b"}) f.client().put("/schedules/" + name, "{\"cron\": \"0 0 * * *\", \"task\": \"t\"}");
        ApiClient.Reply first = f.client().get("/schedules?limit=2");
        assertThat(first.json().get("schedules")).extracting(n -> n.get("name").asText()).containsExactly("a", "b");
        assertThat(first.json().get("next").asText()).isEqualTo("b");
        ApiClient.Reply last = f.client().get("/schedules?limit=2&after=b");
        assertThat(last.json().get("schedules")).extracting(n -> n.get("name").asText()).containsExactly("c");
        assertThat(last.json().get("next").isNull()).as("the last page").isTrue();

        for (String[] bad : new String[][] {{"limit=0", "limit"}, {"limit=501", "limit"}, {"limit=x", "limit"},
                {"after=" + "a".repeat(129), "after"}, {"after=", "after"}, {"after=a&after=b", "after"},
                {"page=2", "page"}}) {
            ApiClient.Reply r = f.client().get("/schedules?" + bad[0]);
            assertThat(r.status()).as(bad[0] + " " + r).isEqualTo(400);
            assertThat(r.json().at("/error/field").asText()).as(bad[0]).isEqualTo(bad[1]);
        }
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', value = {
            "{\"task\": \"t\"}                                             | cron",
            "{\"cron\": 5, \"task\": \"t\"}                                | cron",
            "{\"cron\": \"* * *\", \"task\": \"t\"}                        | cron",
            "{\"cron\": \"61 * * * *\", \"task\": \"t\"}                   | cron",
            "{\"cron\": \"0 0 30 2 *\", \"task\": \"t\"}                   | cron",
            "{\"cron\": \"0 0 * * *\\u0000\", \"task\": \"t\"}            | cron",
            "{\"cron\": \"0 0 0 31W * ?\", \"task\": \"t\"}                | cron",
            "{\"cron\": \"* * * * *\"}                                     | task",
            "{\"cron\": \"* * * * *\", \"task\": \"a b\"}                  | task",
            "{\"cron\": \"* * * * *\", \"task\": \"t\", \"timezone\": \"Mars/Base\"} | timezone",
            "{\"cron\": \"* * * * *\", \"task\": \"t\", \"timezone\": 1}   | timezone",
            "{\"cron\": \"* * * * *\", \"task\": \"t\", \"max_attempts\": 0} | max_attempts",
            "{\"cron\": \"* * * * *\", \"task\": \"t\", \"tenant\": \"\"}  | tenant",
            "{\"cron\": \"* * * * *\", \"task\": \"t\", \"payload\": \"\\u0000\"} | payload",
            "{\"cron\": \"* * * * *\", \"task\": \"t\", \"delay_seconds\": 5} | delay_seconds",
    })
    void eachBadFieldIsNamed(String body, String field) {
        ApiClient.Reply r = f.client().put("/schedules/s", body);
        assertThat(r.status()).as(r.toString()).isEqualTo(400);
        assertThat(r.json().at("/error/field").asText()).isEqualTo(field);
        assertThat(f.client().get("/schedules").json().get("schedules")).as("nothing half-written").isEmpty();
    }

    @ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"%2E%2E", "%2E", "a%20b"})
    void aBadNameInThePathIsNamed(String name) {
        for (String bad : new String[] {"x".repeat(129), name}) {
            ApiClient.Reply r = f.client().put("/schedules/" + bad, "{\"cron\": \"* * * * *\", \"task\": \"t\"}");
            assertThat(r.status()).as(r.toString()).isEqualTo(400);
            assertThat(r.json().at("/error/field").asText()).isEqualTo("name");
        }
    }

    @Test
    void aStoredScheduleThatNoLongerParsesIsShownWithItsError() {
        f.client().put("/schedules/edited", "{\"cron\": \"* * * * *\", \"task\": \"t\"}");
        f.db().execute("UPDATE schedules SET cron = 'every minute please' WHERE name = 'edited'");
        ApiClient.Reply r = f.client().get("/schedules/edited");
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        assertThat(r.json().get("error").asText()).startsWith("cron");
        assertThat(r.json().get("next_tick").isNull()).isTrue();
    }

    @Test
    void aScheduleWaitingForALastTickOfInfinityIsShownWithNoNextTickAndNoError() {
        f.client().put("/schedules/waiting", "{\"cron\": \"* * * * *\", \"task\": \"t\"}");
        f.db().execute("UPDATE schedules SET last_tick = 'infinity' WHERE name = 'waiting'");
        ApiClient.Reply r = f.client().get("/schedules/waiting");
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        assertThat(r.json().get("next_tick").isNull()).isTrue();
        assertThat(r.json().has("error")).as(r.toString()).isFalse();
        assertThat(f.client().get("/schedules").status()).isEqualTo(200);
    }
}
