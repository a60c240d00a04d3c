package io.jobq.http;

import static io.jobq.application.fake.Json.json;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.jobq.application.fake.Await;
import io.jobq.application.worker.HandlerRegistry;
import io.jobq.application.worker.Worker;
import io.jobq.postgres.PostgresJobStore;
import io.jobq.postgres.PostgresWakeupChannel;
import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * Robustness case R04: wake-up messages never carry the payload. NOTIFY's payload is capped near 8,000 bytes; jobs with
 * payloads of 7,900 / 8,001 / 100,000 / 1,000,000 bytes go through HTTP and a worker that listens.
 *
 * <p>"Byte-identical": jsonb keeps values exactly but re-prints whitespace, so the payloads here are sent
 * in jsonb's own print form ({@code {"blob": "…"}}); the stored text must then equal the sent bytes, and
 * the handler must see the same string, multi-byte characters included.
 */
@ExtendWith(PostgresDatabaseExtension.class)
class WakeupCarriesNoPayloadTest {
    static final int[] SIZES = {7_900, 8_001, 100_000, 1_000_000};

    /** A payload of exactly {@code bytes} UTF-8 bytes: {@code {"blob": "…"}} with 1- to 4-byte characters. */
    static String payloadOf(int bytes) {
        String head = "{\"blob\": \"";
        String tail = "\"}";
        String[] pieces = {"abc ", "\u00e9", "\u20ac", "\ud83d\ude00", "xyz-0123 "};
        StringBuilder blob = new StringBuilder();
        int room = bytes - head.length() - tail.length();
        int used = 0;
        for (int i = 0; ; i++) {
            String p = pieces[i % pieces.length];
            int n = p.getBytes(StandardCharsets.UTF_8).length;
            if (used + n > room) break;
            blob.append(p);
            used += n;
        }
        blob.append("a".repeat(room - used));
        String payload = head + blob + tail;
        assertThat(payload.getBytes(StandardCharsets.UTF_8)).hasSize(bytes);
        return payload;
    }

    @Test
    void largePayloadsRunByteIdenticalAndTheWakeupIsAShortIdentifier(TestDatabase db) throws Exception {
        PostgresJobStore store = new PostgresJobStore(db.dataSource());
        Map<Long, String> seenByHandler = new ConcurrentHashMap<>();
        HandlerRegistry handlers = HandlerRegistry.withBuiltIns().register("echo_blob", ctx -> {
            seenByHandler.put(ctx.jobId().value(), ctx.payload().get("blob").textValue());
            return Optional.empty();
        });
        PostgresWakeupChannel channel = new PostgresWakeupChannel(db.jdbcUrl(), db.dataSource());
        try (ApiFixture api = ApiFixture.start(db);
             Connection listener = db.newConnection();
             Worker worker = Worker.builder(store, handlers).wakeups(channel).settings(ListeningWorker.SHORT).build()) {
            try (Statement st = listener.createStatement()) {
                st.execute("LISTEN jobq_wakeup");
            }
            worker.start();
            Await.until(Duration.ofSeconds(10), "worker listening", channel::isConnected);

            List<Long> ids = new ArrayList<>();
            for (int size : SIZES) {
                String payload = payloadOf(size);
                ApiClient.Reply r = api.client().post("/jobs", "{\"task\": \"echo_blob\", \"payload\": " + payload + "}");
                assertThat(r.status()).as("%d-byte payload: %s", size, r.text().length() > 300 ? r.status() : r).isEqualTo(201);
                long id = r.json().get("id").asLong();
                ids.add(id);
                // Each within the 30 s poll interval would mean the wake-up was lost; 10 s is generous.
                Await.until(Duration.ofSeconds(10), size + "-byte job done",
                        () -> "done".equals(api.client().get("/jobs/" + id).json().get("status").asText()));
                String stored = db.dsl().resultQuery("SELECT payload::text FROM jobs WHERE id = {0}", id).fetchSingle(0, String.class);
                assertThat(stored.getBytes(StandardCharsets.UTF_8)).as("%d-byte payload as stored", size)
                        .isEqualTo(payload.getBytes(StandardCharsets.UTF_8));
                JsonNode sent = json(payload);
                assertThat(api.client().get("/jobs/" + id).json().get("payload")).as("payload read back").isEqualTo(sent);
                assertThat(seenByHandler.get(id)).as("%d-byte payload seen by the handler", size)
                        .isEqualTo(sent.get("blob").textValue());
            }

            PGNotification[] got = listener.unwrap(PGConnection.class).getNotifications(2_000);
            assertThat(got).as("one wake-up per enqueue reached the LISTEN session").hasSizeGreaterThanOrEqualTo(SIZES.length);
            for (PGNotification n : got) {
                assertThat(n.getName()).isEqualTo("jobq_wakeup");
                assertThat(n.getParameter().getBytes(StandardCharsets.UTF_8).length).as("wake-up payload bytes").isLessThan(100);
                assertThat(n.getParameter()).isEqualTo("default");
            }
        }
    }
}
