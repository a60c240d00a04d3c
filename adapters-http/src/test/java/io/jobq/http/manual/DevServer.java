package io.jobq.http.manual;

import com.zaxxer.hikari.HikariDataSource;
import io.jobq.http.HttpApi;
import io.jobq.http.HttpSettings;
import io.jobq.postgres.Migrations;
import io.jobq.postgres.PostgresJobStore;
import io.jobq.postgres.PostgresPool;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;

/**
 * Runs the API on a fresh database {@code jobq_dev} until killed, for trying the README's curl examples
 * before the launcher exists. Usage: {@code java -cp … io.jobq.http.manual.DevServer [port]} (default 8000).
 */
public final class DevServer {
    public static void main(String[] args) throws Exception {
        String admin = System.getenv().getOrDefault("JOBQ_TEST_DATABASE_URL", "jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres");
        try (Connection c = DriverManager.getConnection(admin); Statement st = c.createStatement()) {
            st.execute("DROP DATABASE IF EXISTS jobq_dev WITH (FORCE)");
            st.execute("CREATE DATABASE jobq_dev");
        }
        HikariDataSource pool = PostgresPool.create(admin.replaceFirst("/[^/?]+(\\?|$)", "/jobq_dev$1"), 4, "jobq-dev", Duration.ofSeconds(5));
        Migrations.migrate(pool);
        HttpApi api = HttpApi.create(new PostgresJobStore(pool), new PrometheusMeterRegistry(PrometheusConfig.DEFAULT), HttpSettings.DEFAULTS)
                .start(args.length > 0 ? Integer.parseInt(args[0]) : 8000);
        System.out.println("jobq API on port " + api.port());
        Thread.currentThread().join();
    }
}
