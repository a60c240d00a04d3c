package io.jobq.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.http.DashboardClient.Page;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The dashboard over HTTP as a browser uses it: login cookie, pages scoped by key, actions guarded against
 * other sites, hostile text escaped, bad input shown as a 400 page. (DashboardBrowserIT drives a real browser.)
 */
class DashboardTest extends ApiTestCase {
    static final String ADMIN = "admin-key-0123456789-abcdefghij";
    static final String METRICS = "metrics-key-0123456789-abcdefgh";

    ApiClient api;
    DashboardClient anonymous;
    DashboardClient admin;

    @Override
    HttpSettings settings() {
        return HttpSettings.builder().keys(AccessKeys.of(Optional.of(ADMIN), Optional.of(METRICS))).build();
    }

    @BeforeEach
    void clients() {
        api = f.client().withBearer(ADMIN);
        anonymous = new DashboardClient(f.api().port());
        admin = anonymous.login(ADMIN);
    }

    long enqueue(String body) {
        ApiClient.Reply r = api.post("/jobs", j(body));
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        return r.json().get("id").asLong();
    }

    String tenantKey(String tenant) {
        return api.post("/tenants/" + tenant + "/keys", "").json().get("key").asText();
    }

    @Test
    void aBrowserWithoutAValidKeyIsSentToTheLoginPage() {
        for (String path : List.of("/ui", "/ui/jobs", "/ui/jobs/1", "/ui/jobs?status=dead")) {
            Page p = anonymous.get(path);
            assertThat(p.status()).as(path).isEqualTo(303);
            assertThat(p.header("Location")).startsWith("/ui/login");
        }
        assertThat(anonymous.get("/ui/login").status()).isEqualTo(200);
        assertThat(anonymous.post("/ui/login", "key=wrong-key", anonymous.origin).status()).isEqualTo(401);
        Page metrics = anonymous.post("/ui/login", "key=" + METRICS, anonymous.origin);
        assertThat(metrics.status()).isEqualTo(401);
        assertThat(metrics.body()).contains("metrics key does not open the dashboard");
    }

    @Test
    void loggingInLeadsBackToThePageAskedForAndNeverToAnotherSite() {
        Page asked = anonymous.get("/ui/jobs/7?done=cancel");
        assertThat(asked.header("Location")).isEqualTo("/ui/login?next=%2Fui%2Fjobs%2F7%3Fdone%3Dcancel");
        assertThat(anonymous.get("/ui/login?next=%2Fui%2Fjobs%2F7%3Fdone%3Dcancel").body())
                .contains("<input type=\"hidden\" name=\"next\" value=\"/ui/jobs/7?done&#61;cancel\">");
        Page back = anonymous.post("/ui/login", "key=" + ADMIN + "&next=%2Fui%2Fjobs%2F7%3Fdone%3Dcancel", anonymous.origin);
        assertThat(back.header("Location")).isEqualTo("/ui/jobs/7?done=cancel");
        for (String elsewhere : List.of("https://evil.example/ui", "//evil.example/ui", "/ui//evil.example", "/ui/\\evil.example",
                "/uinope", "/jobs", "/ui/a%0d%0aSet-Cookie:x=1", "/ui?x=<b>")) {
            Page p = anonymous.post("/ui/login", "key=" + ADMIN + "&next=" + java.net.URLEncoder.encode(elsewhere,
                    java.nio.charset.StandardCharsets.UTF_8), anonymous.origin);
            assertThat(p.header("Location")).as(elsewhere).isEqualTo("/ui");
        }
    }

    @Test
    void theLoginCookieIsHttpOnlyStrictAndOpensTheDashboardOnly() {
        Page login = anonymous.post("/ui/login", "key=" + ADMIN, anonymous.origin);
        assertThat(login.header("Set-Cookie")).contains("HttpOnly").contains("SameSite=Strict").contains("Path=/ui")
                .doesNotContain("Max-Age").doesNotContain("Expires");
        Page overview = admin.get("/ui");
        assertThat(overview.status()).isEqualTo(200);
        assertThat(overview.header("Content-Security-Policy")).contains("default-src 'none'").contains("frame-ancestors 'none'");
        assertThat(overview.body()).contains("<h1>Overview</h1>").contains("id=\"queues\"").doesNotContain("<script");
        // the cookie is the dashboard's: the JSON API still needs Authorization
        assertThat(f.client().get("/jobs").status()).isEqualTo(401);
        Page typed = admin.get("/ui/logout");
        assertThat(typed.status()).isEqualTo(303);
        assertThat(typed.header("Set-Cookie")).as("a GET logs no one out").isNull();
        Page out = admin.post("/ui/logout", "", admin.origin);
        assertThat(out.status()).isEqualTo(303);
        assertThat(out.header("Set-Cookie")).startsWith("jobq_key=;").contains("Expires=Thu, 01 Jan 1970");
    }

    @Test
    void hostileTextIsShownEscaped() {
        long id = enqueue("{'task': 't', 'tenant': 'acme', 'payload': {'x': '<script>alert(1)</script>\\\" onload=\\\"x'}}");
        for (String path : List.of("/ui/jobs/" + id, "/ui/jobs")) {
            String body = admin.get(path).body();
            assertThat(body).as(path).doesNotContain("<script>alert").doesNotContain("\" onload=\"");
        }
        assertThat(admin.get("/ui/jobs/" + id).body()).contains("&lt;script&gt;alert(1)&lt;/script&gt;");
        Page filtered = admin.get("/ui/jobs?task=%22%3E%3Cscript%3E");
        assertThat(filtered.status()).isEqualTo(400);
        assertThat(filtered.body()).contains("task must be").doesNotContain("\"><script>");
    }

    @Test
    void badInputIsA400PageNamingTheFieldNeverA500() {
        String[][] cases = {{"/ui/jobs?tenant=a%20b", "tenant"}, {"/ui/jobs?queue=" + "q".repeat(200), "queue"},
            {"/ui/jobs?status=nope", "status"}, {"/ui/jobs?after=-1", "after"}, {"/ui/jobs?after=99999999999999999999", "after"},
            {"/ui/jobs?tenant=%00", "tenant"}, {"/ui/jobs/abc", "id"}, {"/ui/jobs/0", "id"}};
        for (String[] c : cases) {
            Page p = admin.get(c[0]);
            assertThat(p.status()).as(c[0]).isEqualTo(400);
            assertThat(p.header("Content-Type")).startsWith("text/html");
            assertThat(p.body()).as(c[0]).contains(c[1]);
        }
        Page missing = admin.get("/ui/nope");
        assertThat(missing.status()).isEqualTo(404);
        assertThat(missing.header("Content-Type")).startsWith("text/html");
        assertThat(missing.header("Content-Security-Policy")).contains("default-src 'none'");
        assertThat(f.client().withBearer(ADMIN).get("/nope").errorCode()).as("the API's own 404 stays JSON").isEqualTo("not_found");
        for (String junk : List.of("/ui/jobs?tenant=&queue=&task=&status=", "/ui/jobs?x=1&x=2", "/ui/jobs?refresh=%ff", "/ui/jobs/1?done=%25zz")) {
            assertThat(admin.get(junk).status()).as(junk).isIn(200, 400, 404);
        }
    }

    @Test
    void retryAndCancelComeFromTheDashboardsOwnPagesOnly() {
        long id = enqueue("{'task': 't', 'tenant': 'acme'}");
        for (String from : new String[] {"http://evil.example", "null"}) {
            assertThat(admin.post("/ui/jobs/" + id + "/cancel", "", from).status()).as(from).isEqualTo(403);
        }
        assertThat(admin.post("/ui/jobs/" + id + "/cancel", "", "https://jobs.example.com", "evil.example").status())
                .as("a proxy's X-Forwarded-Host names another host").isEqualTo(403);
        assertThat(api.get("/jobs/" + id).json().get("status").asText()).as("a foreign form changed nothing").isEqualTo("queued");
        Page proxied = admin.post("/ui/jobs/" + id + "/cancel", "", "https://jobs.example.com", "jobs.example.com");
        assertThat(proxied.status()).as("behind a proxy that rewrites Host and says so in X-Forwarded-Host").isEqualTo(303);
        id = enqueue("{'task': 't', 'tenant': 'acme'}");
        Page cancel = admin.post("/ui/jobs/" + id + "/cancel", "", admin.origin);
        assertThat(cancel.status()).isEqualTo(303);
        assertThat(cancel.header("Location")).isEqualTo("/ui/jobs/" + id + "?done=cancel");
        assertThat(api.get("/jobs/" + id).json().get("status").asText()).isEqualTo("cancelled");
        Page again = admin.post("/ui/jobs/" + id + "/retry", "", admin.origin);
        assertThat(again.status()).isEqualTo(409);
        assertThat(again.body()).contains("only dead jobs can be retried");
    }

    @Test
    void aRefusedActionOnALiveJobReloadsTheJobsPageNotTheAction() {
        long id = enqueue("{'task': 't', 'tenant': 'acme'}");
        Page refused = admin.post("/ui/jobs/" + id + "/retry", "", admin.origin);
        assertThat(refused.status()).isEqualTo(409);
        assertThat(refused.body()).contains("<meta http-equiv=\"refresh\" content=\"2; url=/ui/jobs/" + id + "\">");
        assertThat(admin.get("/ui/jobs/" + id + "?done=cancel").body()).as("no message the job does not bear out")
                .doesNotContain("Cancelling was asked").doesNotContain("was cancelled");
        assertThat(admin.get("/ui/jobs?tenant=a&tenant=b").status()).as("a filter given twice").isEqualTo(400);
    }

    @Test
    void payloadsAreShownWithTheirExactNumbers() {
        long id = enqueue("{'task': 't', 'payload': {'n': 0.1000000000000000055511151231257827, 'k': 123456789012345678901234567890.5}}");
        String page = admin.get("/ui/jobs/" + id).body();
        assertThat(page).contains("0.1000000000000000055511151231257827").contains("123456789012345678901234567890.5");
    }

    @Test
    void aTenantKeySeesItsTenantOnly() {
        long own = enqueue("{'task': 't', 'tenant': 'acme'}");
        long other = enqueue("{'task': 't', 'tenant': 'globex'}");
        DashboardClient acme = anonymous.login(tenantKey("acme"));

        String overview = acme.get("/ui").body();
        assertThat(overview).contains("tenant acme").doesNotContain("id=\"queues\"").doesNotContain("globex");
        String jobs = acme.get("/ui/jobs").body();
        assertThat(jobs).contains("data-id=\"" + own + "\"").doesNotContain("data-id=\"" + other + "\"");
        assertThat(acme.get("/ui/jobs?tenant=globex").status()).isEqualTo(403);
        assertThat(acme.get("/ui/jobs/" + other).status()).isEqualTo(404);
        assertThat(acme.post("/ui/jobs/" + other + "/cancel", "", acme.origin).status()).isEqualTo(404);
        assertThat(api.get("/jobs/" + other).json().get("status").asText()).isEqualTo("queued");
    }

    @Test
    void aRevokedKeyEndsItsDashboardSession() {
        String key = tenantKey("acme");
        DashboardClient acme = anonymous.login(key);
        assertThat(acme.get("/ui").status()).isEqualTo(200);
        String id = api.get("/tenants/acme/keys").json().get("keys").get(0).get("id").asText();
        assertThat(api.method("DELETE", "/tenants/acme/keys/" + id).status()).isEqualTo(204);
        assertThat(acme.get("/ui").status()).isEqualTo(303);
    }

    @Test
    void theJobListPagesAndFilters() {
        for (int i = 0; i < 55; i++) enqueue("{'task': 'email', 'tenant': 'acme'}");
        long report = enqueue("{'task': 'report', 'tenant': 'acme'}");
        String first = admin.get("/ui/jobs?task=email").body();
        assertThat(first.split("data-id=", -1)).hasSize(51);
        String next = first.replaceAll("(?s).*id=\"next\" href=\"([^\"]+)\".*", "$1").replace("&amp;", "&").replace("&#61;", "=");
        assertThat(next).startsWith("/ui/jobs?task=email&after=");
        String second = admin.get(next).body();
        assertThat(second.split("data-id=", -1)).hasSize(6);
        assertThat(second).doesNotContain("id=\"next\"").doesNotContain("data-id=\"" + report + "\"");
        assertThat(admin.get("/ui/jobs?task=report").body()).contains("data-id=\"" + report + "\"");
    }
}
