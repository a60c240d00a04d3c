package com.example.shop;

import io.jobq.application.worker.HandlerRegistry;
import io.jobq.application.worker.Worker;
import io.jobq.application.worker.WorkerSettings;
import io.jobq.postgres.Migrations;
import io.jobq.postgres.PostgresJobStore;
import io.jobq.postgres.PostgresPool;
import io.jobq.postgres.PostgresWakeupChannel;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;

/**
 * The shop wired to jobq: jobq's schema migrated, the shop's tables created, and a worker embedded in
 * the same process, running the shop's own handler with the shop's own objects.
 */
public final class ShopApplication implements AutoCloseable {
    private final Shop shop;
    private final Worker worker;

    private ShopApplication(Shop shop, Worker worker) {
        this.shop = shop;
        this.worker = worker;
    }

    /**
     * Starts the shop on {@code db}.
     *
     * @param jdbcUrl the same database, for the worker's LISTEN connection (direct, not through a transaction pooler)
     */
    public static ShopApplication start(DataSource db, String jdbcUrl, OrderMailer mailer) throws SQLException {
        Migrations.migrate(db);
        Shop shop = new Shop(db);
        shop.createTables();
        HandlerRegistry handlers = new HandlerRegistry()
                .register(Shop.SEND_CONFIRMATION, new SendConfirmation(db, mailer));
        Worker worker = Worker.builder(new PostgresJobStore(db), handlers)
                .wakeups(new PostgresWakeupChannel(jdbcUrl, db))
                .settings(WorkerSettings.builder().concurrency(4).build())
                .build();
        worker.start();
        return new ShopApplication(shop, worker);
    }

    public Shop shop() {
        return shop;
    }

    /** Stops the worker, letting the jobs in hand finish within its grace period. */
    @Override
    public void close() {
        worker.close();
    }

    /** Usage: {@code DATABASE_URL=jdbc:postgresql://localhost:5432/shop?user=postgres java com.example.shop.ShopApplication} */
    public static void main(String[] args) throws Exception {
        String url = System.getenv().getOrDefault("DATABASE_URL", "jdbc:postgresql://localhost:5432/postgres?user=postgres");
        CountDownLatch mailed = new CountDownLatch(1);
        OrderMailer mailer = (email, orderId, key) -> {
            System.out.printf("mail to %s: order %d is confirmed (idempotency key %s)%n", email, orderId, key);
            mailed.countDown();
        };
        try (var pool = PostgresPool.create(url, 5, "shop", Duration.ofSeconds(5));
             ShopApplication app = start(pool, url, mailer)) {
            app.shop().restock("book", 1);
            System.out.println("placed order " + app.shop().placeOrder("ada@example.com", "book"));
            try {
                app.shop().placeOrder("bob@example.com", "book");
            } catch (SQLException e) {
                System.out.println("second order refused, and its job with it: " + e.getMessage());
            }
            if (!mailed.await(10, TimeUnit.SECONDS)) throw new IllegalStateException("no confirmation within 10 s");
        }
    }
}
