package io.jobq.http.manual;

import com.zaxxer.hikari.HikariDataSource;
import io.jobq.http.HttpApi;
import io.jobq.http.HttpSettings;
import io.jobq.postgres.Migrations;
import io.jobq.postgres.PostgresJobStore;
import io.jobq.postgres.PostgresPool;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A manual measurement, not a test (it takes about a minute): how long {@code GET /metrics} and
 * {@code GET /stats} take with 1,000,000 done jobs in the table. Creates (and finally drops) database
 * {@code jobq_perf_1m} on the server of {@code JOBQ_TEST_DATABASE_URL}.
 *
 * <pre>
 * ./mvnw -B -ntp -q -pl adapters-http -am test-compile dependency:build-classpath \
 *     -Dmdep.includeScope=test -Dmdep.outputFile=/tmp/cp-http.txt
 * $JAVA_HOME/bin/java -cp adapters-http/target/test-classes:adapters-http/target/classes:$(cat /tmp/cp-http.txt) \
 *     io.jobq.http.manual.LargeTableTiming
 * </pre>
 */
public final class LargeTableTiming {
    public static void main(String[] args) throws Exception {
        String admin = System.getenv().getOrDefault("JOBQ_TEST_DATABASE_URL", "jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres");
        String db = "jobq_perf_1m";
        try (Connection c = DriverManager.getConnection(admin); Statement st = c.createStatement()) {
            st.execute("DROP DATABASE IF EXISTS " + db + " WITH (FORCE)");
            st.execute("CREATE DATABASE " + db);
        }
        String url = admin.replaceFirst("/[^/?]+(\\?|$)", "/" + db + "$1");
        try (HikariDataSource pool = PostgresPool.create(url, 4, "perf", Duration.ofSeconds(5))) {
            Migrations.migrate(pool);
            long t0 = System.nanoTime();
            try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
                st.execute("INSERT INTO tenants (queue, tenant) VALUES ('default', 'acme')");
                st.execute("""
                        INSERT INTO jobs (queue, tenant, task, payload, state, vtime, run_at, attempts, max_attempts,
                                          created_at, started_at, finished_at)
                        SELECT 'default', 'acme', 'noop', jsonb_build_object('i', g), 'done', g, now(), 1, 5,
                               now(), now(), now()
                        FROM generate_series(1, 1000000) g""");
                // a few live jobs so the exact paths have something to count
                st.execute("""
                        INSERT INTO jobs (queue, tenant, task, payload, state, vtime)
                        SELECT 'default', 'acme', 'noop', '{}', 'queued', 1000000 + g FROM generate_series(1, 100) g""");
                st.execute("VACUUM ANALYZE jobs");
            }
            System.out.printf("inserted 1,000,100 rows and analyzed in %.1f s%n", (System.nanoTime() - t0) / 1e9);

            PostgresJobStore store = new PostgresJobStore(pool);
            System.out.println("countsByQueueAndState: " + store.countsByQueueAndState());
            measure("store.countsByQueueAndState()", () -> store.countsByQueueAndState());
            measure("store.oldestRunnableAge()", () -> store.oldestRunnableAge());
            measure("store.largestBacklogs(10)", () -> store.largestBacklogs(10));

            // metricsMaxAge zero: every scrape queries the store, the worst case
            HttpApi api = HttpApi.create(store, new PrometheusMeterRegistry(PrometheusConfig.DEFAULT),
                    HttpSettings.builder().metricsMaxAge(Duration.ZERO).build()).start(0);
            HttpClient http = HttpClient.newHttpClient();
            try {
                for (String path : List.of("/metrics", "/stats")) {
                    URI uri = URI.create("http://127.0.0.1:" + api.port() + path);
                    measure("GET " + path, () -> {
                        HttpResponse<String> r = http.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString());
                        if (r.statusCode() != 200) throw new IllegalStateException(path + " answered " + r.statusCode());
                        return r.body().length();
                    });
                }
            } finally {
                api.stop();
            }
        } finally {
            try (Connection c = DriverManager.getConnection(admin); Statement st = c.createStatement()) {
                st.execute("DROP DATABASE IF EXISTS " + db + " WITH (FORCE)");
            }
        }
    }

    interface Call {
        Object run() throws Exception;
    }

    static void measure(String what, Call call) throws Exception {
        for (int i = 0; i < 5; i++) call.run(); // warm-up: JIT, plan cache, buffer cache
        List<Double> ms = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            long t = System.nanoTime();
            call.run();
            ms.add((System.nanoTime() - t) / 1e6);
        }
        Collections.sort(ms);
        System.out.printf("%-34s median %7.1f ms   p90 %7.1f ms   max %7.1f ms  (30 runs)%n", what, ms.get(15), ms.get(27), ms.get(29));
    }
}
