package io.jobq.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.jobq.application.fake.Json;
import io.jobq.application.port.ClaimRequest;
import io.jobq.application.port.NewJob;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.lease.WorkerId;
import io.jobq.domain.retry.RetryDecision;
import io.jobq.domain.tenant.TenantId;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/** /jobs end to end: real server, real HTTP client, real PostgreSQL. */
class JobRoutesTest extends ApiTestCase {

    ApiClient.Reply enqueue(String json) {
        return f.client().post("/jobs", j(json));
    }

    /** Enqueues through the store, claims and fails it permanently: a dead job. */
    Job deadJob() {
        f.store().enqueue(NewJob.of(TenantId.of("acme"), QueueName.DEFAULT, TaskName.of("t"), "{}").withMaxAttempts(1));
        Job running = f.store().claim(new ClaimRequest(List.of(QueueName.DEFAULT), WorkerId.of("w1"), 1, Duration.ofSeconds(30))).getFirst();
        f.store().fail(running.fencingToken(), "boom", new RetryDecision.Dead(RetryDecision.Cause.PERMANENT_FAILURE));
        return f.store().get(running.id()).orElseThrow();
    }

    @Nested
    class Enqueue {
        @Test
        void createsAJobAndAnswers201WithEveryField() {
            ApiClient.Reply r = enqueue("{'task': 'word_count', 'tenant': 'acme', 'queue': 'emails', 'payload': {'text': 'hi', 'n': [1, 2.5]},"
                    + " 'idempotency_key': 'order-17', 'max_attempts': 3, 'priority': 4}");
            assertThat(r.status()).as(r.toString()).isEqualTo(201);
            JsonNode job = r.json();
            assertThat(job.properties().stream().map(java.util.Map.Entry::getKey).toList()).containsExactlyInAnyOrder(
                    "id", "task", "tenant", "queue", "status", "attempts", "max_attempts", "payload", "result", "last_error",
                    "run_at", "created_at", "started_at", "finished_at", "idempotency_key", "cancel_requested", "priority", "warning");
            assertThat(job.get("warning").asText()).as("no worker runs here").contains("no live worker serves queue 'emails'");
            assertThat(job.get("id").asLong()).isPositive();
            assertThat(job.get("task").asText()).isEqualTo("word_count");
            assertThat(job.get("tenant").asText()).isEqualTo("acme");
            assertThat(job.get("queue").asText()).isEqualTo("emails");
            assertThat(job.get("status").asText()).isEqualTo("queued");
            assertThat(job.get("attempts").asInt()).isZero();
            assertThat(job.get("max_attempts").asInt()).isEqualTo(3);
            assertThat(job.get("priority").asInt()).isEqualTo(4);
            assertThat(job.get("payload").isObject()).isTrue();
            assertThat(job.get("payload")).isEqualTo(Json.object().put("text", "hi").set("n", Json.MAPPER.createArrayNode().add(1).add(2.5)));
            assertThat(job.get("result").isNull()).isTrue();
            assertThat(job.get("last_error").isNull()).isTrue();
            assertThat(job.get("idempotency_key").asText()).isEqualTo("order-17");
            assertThat(job.get("created_at").asText()).endsWith("Z");
            assertThat(Instant.parse(job.get("run_at").asText())).isCloseTo(Instant.now(), org.assertj.core.api.Assertions.within(Duration.ofMinutes(1)));
            assertThat(job.get("started_at").isNull()).isTrue();
            assertThat(f.jobCount()).isOne();
        }

        @Test
        void appliesTheDefaults() {
            JsonNode job = enqueue("{'task': 't'}").json();
            assertThat(job.get("tenant").asText()).isEqualTo("default");
            assertThat(job.get("queue").asText()).isEqualTo("default");
            assertThat(job.get("max_attempts").asInt()).isEqualTo(5);
            assertThat(job.get("payload")).isEqualTo(Json.object());
            assertThat(job.get("idempotency_key").isNull()).isTrue();
        }

        @Test
        void anyJsonValueIsAPayloadIncludingNull() {
            assertThat(enqueue("{'task': 't', 'payload': [1, 'two', null]}").json().get("payload").size()).isEqualTo(3);
            assertThat(enqueue("{'task': 't', 'payload': 'text'}").json().get("payload").asText()).isEqualTo("text");
            assertThat(enqueue("{'task': 't', 'payload': null}").json().get("payload").isNull()).isTrue();
        }

        @Test
        void aDelayedJobIsScheduledByTheDatabaseClock() {
            JsonNode job = enqueue("{'task': 't', 'delay_seconds': 10.5}").json();
            assertThat(job.get("status").asText()).isEqualTo("scheduled");
            Duration delay = Duration.between(Instant.parse(job.get("created_at").asText()), Instant.parse(job.get("run_at").asText()));
            assertThat(delay).isBetween(Duration.ofMillis(10_400), Duration.ofMillis(10_600));
        }

        @Test
        void runAtSchedulesTheJobForThatInstantAndAPastOneRunsAtOnce() {
            Instant at = Instant.now().plusSeconds(3600).truncatedTo(java.time.temporal.ChronoUnit.SECONDS);
            JsonNode later = enqueue("{'task': 't', 'run_at': '" + at.atOffset(java.time.ZoneOffset.ofHours(2)) + "'}").json();
            assertThat(later.get("status").asText()).isEqualTo("scheduled");
            // by this server's clock, turned into a delay the database adds to its now(): the clocks agree here
            assertThat(Duration.between(at, Instant.parse(later.get("run_at").asText())).abs()).isLessThan(Duration.ofSeconds(2));
            JsonNode past = enqueue("{'task': 't', 'run_at': '2001-01-01T00:00:00Z'}").json();
            assertThat(past.get("status").asText()).isEqualTo("queued");
            ApiClient.Reply batch = f.client().post("/jobs/batch", "{\"task\": \"t\", \"run_at\": \"" + at + "\", \"payloads\": [{}, {}]}");
            assertThat(batch.status()).as(batch.toString()).isEqualTo(201);
            assertThat(f.client().get("/jobs?status=scheduled").json().get("jobs")).hasSize(3);
        }

        @Test
        void aRepeatedKeyAnswers200WithTheOriginalJobAndWritesNothing() {
            ApiClient.Reply first = enqueue("{'task': 't', 'tenant': 'acme', 'idempotency_key': 'k1', 'payload': {'v': 1}}");
            ApiClient.Reply again = enqueue("{'task': 't', 'tenant': 'acme', 'idempotency_key': 'k1', 'payload': {'v': 2}}");
            assertThat(first.status()).isEqualTo(201);
            assertThat(again.status()).isEqualTo(200);
            assertThat(again.json().get("id")).isEqualTo(first.json().get("id"));
            assertThat(again.json().get("payload").get("v").asInt()).isEqualTo(1);
            assertThat(f.jobCount()).isOne();
        }

        @Test
        void tenConcurrentPostsWithOneKeyCreateExactlyOneJob() throws Exception {
            int n = 10;
            CountDownLatch go = new CountDownLatch(1);
            List<Future<ApiClient.Reply>> replies = new ArrayList<>();
            try (ExecutorService pool = Executors.newFixedThreadPool(n)) {
                for (int i = 0; i < n; i++) {
                    replies.add(pool.submit(() -> {
                        go.await();
                        return enqueue("{'task': 't', 'tenant': 'acme', 'idempotency_key': 'same'}");
                    }));
                }
                go.countDown();
                List<Integer> statuses = new ArrayList<>();
                Set<Long> ids = new HashSet<>();
                for (Future<ApiClient.Reply> r : replies) {
                    ApiClient.Reply reply = r.get();
                    statuses.add(reply.status());
                    ids.add(reply.json().get("id").asLong());
                }
                assertThat(statuses).filteredOn(s -> s == 201).hasSize(1);
                assertThat(statuses).filteredOn(s -> s == 200).hasSize(9);
                assertThat(ids).hasSize(1);
            }
            assertThat(f.jobCount()).isOne();
        }

        @Test
        void theSameKeyFromTwoTenantsCreatesTwoJobs() {
            ApiClient.Reply a = enqueue("{'task': 't', 'tenant': 'acme', 'idempotency_key': 'shared'}");
            ApiClient.Reply b = enqueue("{'task': 't', 'tenant': 'globex', 'idempotency_key': 'shared'}");
            assertThat(a.status()).isEqualTo(201);
            assertThat(b.status()).isEqualTo(201);
            assertThat(b.json().get("id")).isNotEqualTo(a.json().get("id"));
            assertThat(b.json().get("tenant").asText()).isEqualTo("globex");
            assertThat(f.jobCount()).isEqualTo(2);
        }

        /** R04: large payloads within the body limit are stored intact; NOTIFY never carries them. */
        @Test
        void largePayloadsAreStoredIntact() {
            for (int size : new int[] {7_900, 8_001, 100_000, 1_000_000}) {
                String text = "x".repeat(size);
                ApiClient.Reply r = enqueue("{'task': 't', 'payload': {'blob': '" + text + "'}}");
                assertThat(r.status()).as("size " + size).isEqualTo(201);
                String stored = f.db().dsl().resultQuery("SELECT payload->>'blob' FROM jobs WHERE id = ?", r.json().get("id").asLong())
                        .fetchSingle(0, String.class);
                assertThat(stored).isEqualTo(text);
            }
        }
    }

    @Nested
    class Batch {
        @Test
        void aThousandPayloadsAreOneInsertAndOneNotificationBurst() throws Exception {
            String payloads = IntStream.range(0, 1000).mapToObj(i -> "{\"i\": " + i + "}").collect(Collectors.joining(",", "[", "]"));
            try (Connection listener = f.db().newConnection()) {
                try (Statement st = listener.createStatement()) {
                    st.execute("LISTEN jobq_wakeup");
                }
                ApiClient.Reply r = f.client().post("/jobs/batch", "{\"task\": \"t\", \"tenant\": \"acme\", \"payloads\": " + payloads + "}");
                assertThat(r.status()).as(r.toString()).isEqualTo(201);
                List<Long> ids = new ArrayList<>();
                r.json().get("ids").forEach(id -> ids.add(id.asLong()));
                assertThat(ids).hasSize(1000).doesNotHaveDuplicates().isSorted();
                assertThat(f.jobCount()).isEqualTo(1000);
                // the i-th id carries the i-th payload
                assertThat(f.db().dsl().resultQuery("SELECT (payload->>'i')::int FROM jobs WHERE id = ?", ids.get(737)).fetchSingle(0, Integer.class))
                        .isEqualTo(737);

                List<PGNotification> received = new ArrayList<>();
                PGConnection pg = listener.unwrap(PGConnection.class);
                PGNotification[] batch = pg.getNotifications(2_000);
                while (batch != null && batch.length > 0) {
                    received.addAll(List.of(batch));
                    batch = pg.getNotifications(300);
                }
                assertThat(received).isNotEmpty().hasSizeLessThanOrEqualTo(3);
                assertThat(received).allSatisfy(n -> assertThat(n.getParameter()).isEqualTo("default"));
            }
        }

        @Test
        void answersTheIdsInPayloadOrderWithTheRequestedSettings() {
            ApiClient.Reply r = f.client().post("/jobs/batch", "{\"task\": \"resize\", \"queue\": \"images\", \"max_attempts\": 2, \"delay_seconds\": 60, \"payloads\": [{\"n\": 1}, {\"n\": 2}]}");
            assertThat(r.status()).isEqualTo(201);
            long second = r.json().get("ids").get(1).asLong();
            JsonNode job = f.client().get("/jobs/" + second).json();
            assertThat(job.get("payload").get("n").asInt()).isEqualTo(2);
            assertThat(job.get("queue").asText()).isEqualTo("images");
            assertThat(job.get("max_attempts").asInt()).isEqualTo(2);
            assertThat(job.get("status").asText()).isEqualTo("scheduled");
        }

        @Test
        void a1001stPayloadIsRefusedAndNothingIsWritten() {
            String payloads = IntStream.range(0, 1001).mapToObj(i -> "{}").collect(Collectors.joining(",", "[", "]"));
            ApiClient.Reply r = f.client().post("/jobs/batch", "{\"task\": \"t\", \"payloads\": " + payloads + "}");
            assertThat(r.status()).isEqualTo(400);
            assertThat(r.errorField()).isEqualTo("payloads");
            assertThat(r.errorMessage()).contains("1000").contains("1001");
            assertThat(f.jobCount()).isZero();
        }
    }

    @Nested
    class Read {
        @Test
        void getAnswersTheJobOr404() {
            long id = enqueue("{'task': 't'}").json().get("id").asLong();
            ApiClient.Reply r = f.client().get("/jobs/" + id);
            assertThat(r.status()).isEqualTo(200);
            assertThat(r.json().get("id").asLong()).isEqualTo(id);
            ApiClient.Reply missing = f.client().get("/jobs/" + (id + 1));
            assertThat(missing.status()).isEqualTo(404);
            assertThat(missing.errorCode()).isEqualTo("job_not_found");
        }

        List<Long> ids(ApiClient.Reply page) {
            List<Long> out = new ArrayList<>();
            page.json().get("jobs").forEach(j -> out.add(j.get("id").asLong()));
            return out;
        }

        @Test
        void listsNewestFirstWithAKeysetCursorThatIsNullOnTheLastPage() {
            for (int i = 0; i < 5; i++) enqueue("{'task': 't'}");
            ApiClient.Reply p1 = f.client().get("/jobs?limit=2");
            assertThat(ids(p1)).containsExactly(5L, 4L);
            assertThat(p1.json().get("next").asLong()).isEqualTo(4);
            ApiClient.Reply p2 = f.client().get("/jobs?limit=2&after=4");
            assertThat(ids(p2)).containsExactly(3L, 2L);
            ApiClient.Reply p3 = f.client().get("/jobs?limit=2&after=" + p2.json().get("next").asLong());
            assertThat(ids(p3)).containsExactly(1L);
            assertThat(p3.json().get("next").isNull()).isTrue();
        }

        @Test
        void aFullLastPageHasNoNext() {
            for (int i = 0; i < 4; i++) enqueue("{'task': 't'}");
            ApiClient.Reply p2 = f.client().get("/jobs?limit=2&after=3");
            assertThat(ids(p2)).containsExactly(2L, 1L);
            assertThat(p2.json().get("next").isNull()).isTrue();
        }

        @Test
        void aPageOfLargeJobsEndsEarlyAndItsNextLeadsOn() {
            String big = "{'task': 't', 'payload': {'big': '" + "x".repeat(1_000_000) + "'}}";
            for (int i = 0; i < 6; i++) enqueue(big);
            ApiClient.Reply p1 = f.client().get("/jobs?limit=500");
            assertThat(ids(p1)).as("4 Mi characters of payloads at most").containsExactly(6L, 5L, 4L, 3L);
            assertThat(p1.json().get("next").asLong()).isEqualTo(3);
            ApiClient.Reply p2 = f.client().get("/jobs?limit=500&after=3");
            assertThat(ids(p2)).containsExactly(2L, 1L);
            assertThat(p2.json().get("next").isNull()).isTrue();
        }

        @Test
        void filtersByTenantQueueAndStatus() {
            enqueue("{'task': 't', 'tenant': 'acme'}");
            enqueue("{'task': 't', 'tenant': 'globex'}");
            enqueue("{'task': 't', 'tenant': 'acme', 'queue': 'q2'}");
            enqueue("{'task': 't', 'tenant': 'acme', 'delay_seconds': 100}");
            assertThat(ids(f.client().get("/jobs?tenant=acme"))).containsExactly(4L, 3L, 1L);
            assertThat(ids(f.client().get("/jobs?tenant=acme&queue=default&status=queued"))).containsExactly(1L);
            assertThat(ids(f.client().get("/jobs?status=scheduled"))).containsExactly(4L);
            assertThat(ids(f.client().get("/jobs?status=dead"))).isEmpty();
        }
    }

    @Nested
    class Retry {
        @Test
        void aDeadJobIsQueuedAgain() {
            Job dead = deadJob();
            assertThat(dead.state().dbName()).isEqualTo("dead");
            ApiClient.Reply r = f.client().post("/jobs/" + dead.id() + "/retry", "");
            assertThat(r.status()).as(r.toString()).isEqualTo(200);
            assertThat(r.json().get("status").asText()).isEqualTo("queued");
            assertThat(r.json().get("finished_at").isNull()).isTrue();
            assertThat(f.count("id = " + dead.id() + " AND state = 'queued'")).isOne();
        }

        @Test
        void aQueuedJobIs409NamingItsStatus() {
            long id = enqueue("{'task': 't'}").json().get("id").asLong();
            ApiClient.Reply r = f.client().post("/jobs/" + id + "/retry", "");
            assertThat(r.status()).isEqualTo(409);
            assertThat(r.errorCode()).isEqualTo("job_not_dead");
            assertThat(r.errorMessage()).contains("queued");
        }

        @Test
        void anUnknownJobIs404() {
            ApiClient.Reply r = f.client().post("/jobs/999/retry", "");
            assertThat(r.status()).isEqualTo(404);
            assertThat(r.errorCode()).isEqualTo("job_not_found");
        }
    }
}
