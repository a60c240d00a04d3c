package io.jobq.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A tenant's key: enqueues only as its tenant, sees only its own jobs, changes nothing else; revoked at once. */
class TenantKeysTest extends ApiTestCase {
    static final String ADMIN = "admin-key-0123456789-abcdefghij";

    ApiClient admin;
    String acmeKey;
    ApiClient acme;
    long globexJob;

    @Override
    HttpSettings settings() {
        return HttpSettings.builder().keys(AccessKeys.of(Optional.of(ADMIN), Optional.empty())).build();
    }

    @BeforeEach
    void keys() {
        admin = f.client().withBearer(ADMIN);
        ApiClient.Reply made = admin.post("/tenants/acme/keys", "");
        assertThat(made.status()).as(made.toString()).isEqualTo(201);
        acmeKey = made.json().get("key").asText();
        assertThat(acmeKey).matches("jobq_[a-z0-9]{16}_[A-Za-z0-9_-]{43}");
        acme = f.client().withBearer(acmeKey);
        globexJob = admin.post("/jobs", "{\"task\": \"t\", \"tenant\": \"globex\"}").json().get("id").asLong();
    }

    @Test
    void theKeyIsShownOnceAndListedWithoutIt() {
        JsonNode listed = admin.get("/tenants/acme/keys").json().get("keys");
        assertThat(listed).hasSize(1);
        assertThat(listed.get(0).has("key")).isFalse();
        assertThat(listed.toString()).doesNotContain(acmeKey.substring(22));
        assertThat(admin.get("/tenants/globex/keys").json().get("keys")).isEmpty();
    }

    @Test
    void aTenantKeyEnqueuesAsItsTenantOnly() {
        ApiClient.Reply own = acme.post("/jobs", "{\"task\": \"t\"}");
        assertThat(own.status()).as(own.toString()).isEqualTo(201);
        assertThat(own.json().get("tenant").asText()).as("the key's tenant by default").isEqualTo("acme");
        ApiClient.Reply other = acme.post("/jobs", "{\"task\": \"t\", \"tenant\": \"globex\"}");
        assertThat(other.status()).isEqualTo(403);
        assertThat(other.errorField()).isEqualTo("tenant");
        assertThat(acme.post("/jobs/batch", "{\"task\": \"t\", \"tenant\": \"globex\", \"payloads\": [1]}").status()).isEqualTo(403);
        assertThat(acme.post("/jobs/batch", "{\"task\": \"t\", \"payloads\": [1, 2]}").status()).isEqualTo(201);
        assertThat(f.jobCount()).isEqualTo(4); // globex's from the admin, and acme's three
    }

    @Test
    void aTenantKeySeesOnlyItsOwnJobsAndAnotherTenantsAreAsIfAbsent() {
        long own = acme.post("/jobs", "{\"task\": \"t\"}").json().get("id").asLong();
        JsonNode listed = acme.get("/jobs").json().get("jobs");
        assertThat(listed).extracting(j -> j.get("id").asLong()).containsExactly(own);
        assertThat(acme.get("/jobs?tenant=globex").status()).isEqualTo(403);
        for (ApiClient.Reply r : new ApiClient.Reply[] {acme.get("/jobs/" + globexJob), acme.post("/jobs/" + globexJob + "/cancel", ""),
                acme.post("/jobs/" + globexJob + "/retry", "")}) {
            assertThat(r.status()).as(r.toString()).isEqualTo(404);
            assertThat(r.errorCode()).isEqualTo("job_not_found");
        }
        assertThat(admin.get("/jobs/" + globexJob).json().get("status").asText()).as("not cancelled").isEqualTo("queued");
        assertThat(acme.get("/jobs/" + own).status()).isEqualTo(200);
        assertThat(acme.post("/jobs/" + own + "/cancel", "").json().get("status").asText()).isEqualTo("cancelled");
    }

    @Test
    void aTenantKeyChangesNoSettingAndReadsNoOneElsesFigures() {
        for (ApiClient.Reply r : new ApiClient.Reply[] {acme.put("/tenants/acme", "{\"weight\": 100}"),
                acme.put("/queues/default", "{\"fairness\": \"work\"}"), acme.get("/stats"), acme.get("/metrics"),
                acme.get("/workers"), acme.get("/schedules"), acme.post("/tenants/acme/keys", ""), acme.get("/tenants/acme/keys")}) {
            assertThat(r.status()).as(r.toString()).isEqualTo(403);
            assertThat(r.errorCode()).isEqualTo("forbidden");
        }
    }

    @Test
    void aRevokedKeyIsRefusedAtOnceAndAForgedOneNever() {
        String id = acmeKey.substring(5, 21);
        assertThat(admin.method("DELETE", "/tenants/globex/keys/" + id).status()).as("another tenant's path").isEqualTo(404);
        assertThat(acme.get("/jobs").status()).isEqualTo(200);
        assertThat(admin.method("DELETE", "/tenants/acme/keys/" + id).status()).isEqualTo(204);
        assertThat(acme.get("/jobs").status()).isEqualTo(401);
        assertThat(admin.method("DELETE", "/tenants/acme/keys/" + id).status()).isEqualTo(404);

        String fresh = admin.post("/tenants/acme/keys", "").json().get("key").asText();
        String forged = fresh.substring(0, 22) + (fresh.charAt(22) == 'A' ? 'B' : 'A') + fresh.substring(23);
        assertThat(f.client().withBearer(forged).get("/jobs").status()).isEqualTo(401);
        assertThat(f.client().withBearer(fresh).get("/jobs").status()).isEqualTo(200);
    }
}
