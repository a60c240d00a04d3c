package com.example.shop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import io.jobq.application.port.JobQuery;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobState;
import io.jobq.postgres.PostgresJobStore;
import io.jobq.postgres.testing.ApplicationDatabase;
import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The example end to end against real PostgreSQL: what README's "Use it from Java" promises. */
@ExtendWith(PostgresDatabaseExtension.class)
class ShopApplicationTest {
    record Mail(String email, long orderId, String idempotencyKey) {}

    final BlockingQueue<Mail> outbox = new LinkedBlockingQueue<>();
    final OrderMailer mailer = (email, orderId, key) -> outbox.add(new Mail(email, orderId, key));

    @Test
    void anOrderCommitsWithItsJobTheWorkerMailsItAndARolledBackOrderLeavesNoJob(TestDatabase db) throws Exception {
        PostgresJobStore store = new PostgresJobStore(db.dataSource());
        // the shop's own sessions: the server's default search_path, as in an application's database
        String url = ApplicationDatabase.url(db);
        try (HikariDataSource pool = ApplicationDatabase.pool(db);
             ShopApplication app = ShopApplication.start(pool, url, mailer)) {
            app.shop().restock("book", 1);

            long placed = app.shop().placeOrder("ada@example.com", "book");
            Mail mail = outbox.poll(10, TimeUnit.SECONDS);

            assertThat(mail).isNotNull();
            assertThat(mail.email()).isEqualTo("ada@example.com");
            assertThat(mail.orderId()).isEqualTo(placed);

            // Out of stock: the stock table's CHECK refuses, after the order row and its job were written.
            assertThatThrownBy(() -> app.shop().placeOrder("bob@example.com", "book"))
                    .isInstanceOf(SQLException.class).hasMessageContaining("stock");

            assertThat(db.dsl().fetchCount(db.dsl().selectFrom("orders"))).isEqualTo(1);
            List<Job> jobs = store.list(JobQuery.firstPage());
            assertThat(jobs).singleElement().satisfies(job -> {
                assertThat(job.task()).isEqualTo(Shop.SEND_CONFIRMATION);
                assertThat(job.state()).isEqualTo(JobState.DONE);
                assertThat(mail.idempotencyKey()).isEqualTo("confirmation-" + job.id());
            });
            assertThat(outbox.poll(500, TimeUnit.MILLISECONDS)).as("a mail for the rolled-back order").isNull();
        }
    }
}
