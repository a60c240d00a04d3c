package io.jobq.http;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Without an admin key the API is open, and tenant keys would protect nothing: they are not made. */
class KeysDisabledTest extends ApiTestCase {
    @Test
    void anOpenServerMakesNoTenantKeys() {
        ApiClient.Reply r = f.client().post("/tenants/acme/keys", "");
        assertThat(r.status()).as(r.toString()).isEqualTo(409);
        assertThat(r.errorCode()).isEqualTo("keys_disabled");
        assertThat(f.client().get("/jobs").status()).as("open").isEqualTo(200);
    }
}
