package io.jobq.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.time.Duration;

/** Builds the HikariCP pool jobq uses for every store operation (LISTEN uses its own connection). */
public final class PostgresPool {
    private PostgresPool() {}

    /**
     * A pool on {@code jdbcUrl}.
     *
     * @param jdbcUrl {@code jdbc:postgresql://host:port/db?user=…&password=…}
     * @param maxSize most connections; a worker needs about 3 (claim, heartbeat, maintenance) plus one per
     *     slot finishing at the same moment
     * @param poolName shown in HikariCP's metrics and logs
     * @param connectionTimeout how long a caller waits for a connection before the store reports
     *     unavailable. Default in jobq: 5 s.
     */
    public static HikariDataSource create(String jdbcUrl, int maxSize, String poolName, Duration connectionTimeout) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl);
        config.setMaximumPoolSize(maxSize);
        config.setMinimumIdle(Math.min(2, maxSize));
        config.setPoolName(poolName);
        config.setConnectionTimeout(connectionTimeout.toMillis());
        // Fail fast at start-up is the launcher's job (it pings); the pool itself must survive a
        // database that is down when it is created, and reconnect when it returns.
        config.setInitializationFailTimeout(-1);
        config.addDataSourceProperty("ApplicationName", poolName);
        // Statements are short; a hung one (a lost network) must not hold a pool slot forever.
        config.addDataSourceProperty("socketTimeout", "60");
        config.addDataSourceProperty("tcpKeepAlive", "true");
        return new HikariDataSource(config);
    }
}
