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
    void jobsWithInfiniteTimestampsAnswer200EverywhereAndKeepTheGauges() {
        // PostgreSQL takes infinity in any timestamptz, and no rule refuses it (see docs/notes-rows.md, case d)
        long queued = f.db().dsl().resultQuery("INSERT INTO jobs (queue, tenant, task, state, vtime, created_at, run_at) VALUES"
                + " ('default', 'acme', 'noop', 'queued', 1, 'infinity', '-infinity') RETURNING id").fetchSingle(0, Long.class);
        long done = f.db().dsl().resultQuery("INSERT INTO jobs (queue, tenant, task, state, started_at, finished_at) VALUES"
                + " ('default', 'acme', 'noop', 'done', '-infinity', 'infinity') RETURNING id").fetchSingle(0, Long.class);
        long running = f.db().dsl().resultQuery("INSERT INTO jobs (queue, tenant, task, state, attempts, locked_by, locked_until,"
                + " started_at) VALUES ('default', 'acme', 'noop', 'running', 1, 'w', 'infinity', '-infinity') RETURNING id")
                .fetchSingle(0, Long.class);

        for (long id : List.of(queued, done, running)) {
            ApiClient.Reply one = f.client().get("/jobs/" + id);
            assertThat(one.status()).as(one.toString()).isEqualTo(200);
            assertThat(one.json().get("id").asLong()).isEqualTo(id);
        }
        for (String path : List.of("/jobs", "/jobs?status=queued", "/stats", "/ui", "/ui/jobs", "/ui/jobs/" + queued, "/ui/jobs/" + done)) {
            ApiClient.Reply r = f.client().get(path);
            assertThat(r.status()).as(path + ": " + r).isEqualTo(200);
        }
        ApiClient.Reply metrics = f.client().get("/metrics");
        assertThat(metrics.status()).isEqualTo(200);
        assertThat(metrics.text()).as("the store's gauges were read").contains("jobq_oldest_runnable_age_seconds{")
                .contains("jobq_metrics_refresh_failures_total 0.0");
    }
}
