package io.jobq.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** With an admin key the API answers only requests that carry it (a metrics key for /metrics); /health stays open. */
class AccessKeysTest extends ApiTestCase {
    static final String ADMIN = "admin-key-0123456789-abcdefghij";
    static final String METRICS = "metrics-key-0123456789-abcdefgh";

    @Override
    HttpSettings settings() {
        return HttpSettings.builder().keys(AccessKeys.of(Optional.of(ADMIN), Optional.of(METRICS))).build();
    }

    @Test
    void withoutTheKeyEveryEndpointButHealthIs401AndNothingIsWritten() {
        for (String path : new String[] {"/jobs", "/stats", "/workers", "/schedules", "/metrics", "/openapi.json", "/no-such-route"}) {
            ApiClient.Reply r = f.client().get(path);
            assertThat(r.status()).as(path + ": " + r).isEqualTo(401);
            assertThat(r.errorCode()).isEqualTo("unauthorized");
            assertThat(r.headers().firstValue("WWW-Authenticate")).hasValueSatisfying(v -> assertThat(v).startsWith("Bearer"));
        }
        assertThat(f.client().post("/jobs", "{\"task\": \"t\"}").status()).isEqualTo(401);
        assertThat(f.client().put("/tenants/acme", "{\"weight\": 3}").status()).isEqualTo(401);
        assertThat(f.jobCount()).isZero();
        assertThat(f.client().get("/health").status()).as("probes need no key").isEqualTo(200);
    }

    @Test
    void theAdminKeyOpensEverythingAndAWrongKeyNothing() {
        ApiClient admin = f.client().withBearer(ADMIN);
        assertThat(admin.post("/jobs", "{\"task\": \"t\"}").status()).isEqualTo(201);
        assertThat(admin.get("/stats").status()).isEqualTo(200);
        assertThat(admin.get("/metrics").status()).isEqualTo(200);

        for (String wrong : new String[] {ADMIN.substring(1), ADMIN + "x", ADMIN.toUpperCase(), "", "x".repeat(10_000)}) {
            ApiClient.Reply r = f.client().withBearer(wrong).get("/stats");
            // 431 for the 10,000-character one: Jetty refuses headers over 8 KiB before any route
            assertThat(r.status()).as("key %.20s…", wrong).isIn(401, 431);
            assertThat(r.text()).as("the body never quotes a key").doesNotContain(ADMIN).doesNotContain(METRICS);
        }
    }

    @Test
    void theMetricsKeyOpensMetricsOnly() {
        ApiClient scraper = f.client().withBearer(METRICS);
        assertThat(scraper.get("/metrics").status()).isEqualTo(200);
        // a valid key, but not for these: 403 forbidden, not 401
        assertThat(scraper.get("/stats").status()).isEqualTo(403);
        assertThat(scraper.post("/jobs", "{\"task\": \"t\"}").status()).isEqualTo(403);
        assertThat(f.jobCount()).isZero();
    }

    @Test
    void keysAreKeptOnlyAsDigestsAndNeverPrinted() throws Exception {
        AccessKeys keys = AccessKeys.of(Optional.of(ADMIN), Optional.of(METRICS));
        assertThat(keys.toString()).doesNotContain(ADMIN).doesNotContain(METRICS);
        assertThat(settings().toString()).doesNotContain(ADMIN);
        for (var field : AccessKeys.class.getDeclaredFields()) {
            if (java.lang.reflect.Modifier.isStatic(field.getModifiers())) continue;
            field.setAccessible(true);
            Object value = field.get(keys);
            assertThat(value).as(field.getName()).isInstanceOf(byte[].class);
            assertThat(((byte[]) value).length).as("a SHA-256 digest, compared with MessageDigest.isEqual").isEqualTo(32);
            assertThat(new String((byte[]) value, java.nio.charset.StandardCharsets.ISO_8859_1)).doesNotContain(ADMIN);
        }
    }

    @Test
    void weakKeysAreRefusedWithoutQuotingThem() {
        String weak = "short-key";
        assertThatThrownBy(() -> AccessKeys.of(Optional.of(weak), Optional.empty())).hasMessageContaining("at least 20")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain(weak));
        assertThatThrownBy(() -> AccessKeys.of(Optional.of("has blanks in it 0123456789"), Optional.empty()))
                .hasMessageContaining("printable ASCII");
        assertThatThrownBy(() -> AccessKeys.of(Optional.empty(), Optional.of(METRICS))).hasMessageContaining("needs an admin key");
        assertThat(AccessKeys.OPEN.isOpen()).isTrue();
        assertThat(Arrays.asList(AccessKeys.of(Optional.of(ADMIN), Optional.empty()).isOpen())).containsExactly(false);
    }
}
