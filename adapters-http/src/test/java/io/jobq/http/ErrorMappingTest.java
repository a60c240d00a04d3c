package io.jobq.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.jobq.application.fake.InMemoryJobStore;
import io.jobq.application.port.JobStore;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.time.InstantSource;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Who is at fault decides the status: input the store refuses is 400, a fault of the server stays
 * 500, and either way the body is bounded. The store is the in-memory fake with chosen methods made
 * to throw, since PostgreSQL refuses nothing the API's own checks let through.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ErrorMappingTest {
    final Map<String, RuntimeException> failures = new ConcurrentHashMap<>();
    ApiFixture api;
    ApiClient client;

    @BeforeAll
    void start() {
        JobStore fake = new InMemoryJobStore(InstantSource.system());
        JobStore failing = (JobStore) Proxy.newProxyInstance(JobStore.class.getClassLoader(), new Class<?>[] {JobStore.class},
                (proxy, method, args) -> {
                    RuntimeException failure = failures.get(method.getName());
                    if (failure != null) throw failure;
                    try {
                        return method.invoke(fake, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
        api = ApiFixture.start(null, failing, HttpSettings.DEFAULTS);
        client = api.client();
    }

    @AfterAll
    void stop() {
        api.close();
    }

    @BeforeEach
    void reset() {
        failures.clear();
    }

    @Test
    void inputTheStoreRefusesIs400() {
        failures.put("enqueue", new IllegalArgumentException("payload is not storable JSON: a CHECK constraint refused it"));
        ApiClient.Reply r = client.post("/jobs", "{\"task\": \"t\"}");
        assertThat(r.status()).as(r.toString()).isEqualTo(400);
        assertThat(r.errorCode()).isEqualTo("bad_request");
        assertThat(r.errorMessage()).contains("payload is not storable JSON");
    }

    @Test
    void aFaultOfTheServerStays500WithABoundedBodyAndNoDetail() {
        failures.put("list", new IllegalStateException("secret detail " + "x".repeat(100_000)));
        ApiClient.Reply r = client.get("/jobs");
        assertThat(r.status()).as(r.toString()).isEqualTo(500);
        assertThat(r.errorCode()).isEqualTo("internal_error");
        assertThat(r.text()).doesNotContain("secret").contains("ref ");
        assertThat(r.text().getBytes(StandardCharsets.UTF_8).length).isLessThanOrEqualTo(ProblemResponse.MAX_BODY_BYTES);
    }

    @Test
    void anythingUnforeseenWhileReadingARequestIs400() {
        assertThatThrownBy(() -> Inputs.read(() -> {
            throw new ArrayIndexOutOfBoundsException("Index 0 out of bounds for length 0");
        })).isInstanceOfSatisfying(ApiException.class, e -> {
            assertThat(e.status()).isEqualTo(400);
            assertThat(e.code()).isEqualTo("bad_request");
            assertThat(e.getMessage()).contains("ArrayIndexOutOfBoundsException", "ref ");
        });
        ApiException refused = ApiException.invalid("weight", "weight must be 0.000001-1000000, was 1E-7");
        assertThatThrownBy(() -> Inputs.read(() -> {
            throw refused;
        })).isSameAs(refused);
    }
}
