package io.jobq.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 11: a row the schema let in once (before schema V2's rules, or with them dropped, as in this
 * class's own database) never turns a read, an enqueue or a retry into a 500. Here: a queued job with
 * {@code task = 'bad task'} and {@code vtime = 'Infinity'}, and a dead one whose payload PostgreSQL cannot
 * print (8,200 x {@code 1e131071}, over 1 GB as text).
 */
class LegacyRowsTest extends ApiTestCase {
    long badName;
    long unprintable;

    @BeforeEach
    void legacyRows() {
        f.db().execute("ALTER TABLE jobs DROP CONSTRAINT IF EXISTS jobs_task_valid, DROP CONSTRAINT IF EXISTS jobs_vtime_finite");
        f.db().execute("DROP TRIGGER IF EXISTS jobs_payload_readable ON jobs");
        f.db().execute("INSERT INTO tenants (queue, tenant) VALUES ('default', 'acme')");
        badName = f.db().dsl().resultQuery("INSERT INTO jobs (queue, tenant, task, state, vtime) VALUES"
                + " ('default', 'acme', 'bad task', 'queued', 'Infinity') RETURNING id").fetchSingle(0, Long.class);
        unprintable = f.db().dsl().resultQuery("INSERT INTO jobs (queue, tenant, task, state, finished_at, payload) VALUES"
                + " ('default', 'acme', 'noop', 'dead', now(), (SELECT ('[' || string_agg('1e131071', ',') || ']')::jsonb"
                + " FROM generate_series(1, 8200))) RETURNING id").fetchSingle(0, Long.class);
    }

    @Test
    void readsAnswer200ShowingWhatCanBeShown() {
        ApiClient.Reply one = f.client().get("/jobs/" + badName);
        assertThat(one.status()).as(one.toString()).isEqualTo(200);
        assertThat(one.json().get("task").asText()).isEqualTo("invalid:bad_task");

        ApiClient.Reply other = f.client().get("/jobs/" + unprintable);
        assertThat(other.status()).as(other.toString()).isEqualTo(200);
        assertThat(other.json().get("payload").isNull()).isTrue();

        ApiClient.Reply page = f.client().get("/jobs");
        assertThat(page.status()).as(page.toString()).isEqualTo(200);
        List<Long> ids = new ArrayList<>();
        page.json().get("jobs").forEach(j -> ids.add(j.get("id").asLong()));
        assertThat(ids).containsExactly(unprintable, badName);

        assertThat(f.client().get("/stats").status()).isEqualTo(200);
        assertThat(f.client().get("/metrics").status()).isEqualTo(200);
    }

    @Test
    void enqueuesAndRetriesIntoTheQueueAnswer2xx() {
        ApiClient.Reply created = f.client().post("/jobs", j("{'task': 'noop', 'tenant': 'newcomer'}"));
        assertThat(created.status()).as(created.toString()).isEqualTo(201);
        ApiClient.Reply retried = f.client().post("/jobs/" + unprintable + "/retry", "");
        assertThat(retried.status()).as(retried.toString()).isEqualTo(200);
        assertThat(retried.json().get("status").asText()).isEqualTo("queued");
    }

    @Test
    void aJobWithInfiniteTimestampsAnswers200Everywhere() {
        // PostgreSQL takes infinity in any timestamptz, and no rule refuses it (see docs/notes-rows.md, case d)
        long odd = f.db().dsl().resultQuery("INSERT INTO jobs (queue, tenant, task, state, vtime, created_at, run_at) VALUES"
                + " ('default', 'acme', 'noop', 'queued', 1, 'infinity', '-infinity') RETURNING id").fetchSingle(0, Long.class);

        ApiClient.Reply one = f.client().get("/jobs/" + odd);
        assertThat(one.status()).as(one.toString()).isEqualTo(200);
        assertThat(one.json().get("id").asLong()).isEqualTo(odd);
        for (String path : List.of("/jobs", "/jobs?status=queued", "/stats", "/metrics", "/ui", "/ui/jobs", "/ui/jobs/" + odd)) {
            ApiClient.Reply r = f.client().get(path);
            assertThat(r.status()).as(path + ": " + r).isEqualTo(200);
        }
    }
}
