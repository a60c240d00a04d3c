package com.example.shop;

import io.jobq.application.port.NewJob;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.tenant.TenantId;
import io.jobq.postgres.JobClient;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;

/** The shop's business code: an order and the job that confirms it are written in one transaction. */
public final class Shop {
    /** The task that mails an order's confirmation. */
    public static final TaskName SEND_CONFIRMATION = TaskName.of("send_order_confirmation");

    private final DataSource db;
    private final JobClient jobs = new JobClient();

    public Shop(DataSource db) {
        this.db = db;
    }

    /** Creates the shop's own tables, beside jobq's (a real application has its own migrations). */
    public void createTables() throws SQLException {
        try (Connection c = db.getConnection(); Statement st = c.createStatement()) {
            st.execute("CREATE TABLE IF NOT EXISTS stock (item text PRIMARY KEY, available int NOT NULL CHECK (available >= 0))");
            st.execute("CREATE TABLE IF NOT EXISTS orders (id bigserial PRIMARY KEY, email text NOT NULL, item text NOT NULL)");
        }
    }

    /** Sets how many of {@code item} are in stock. */
    public void restock(String item, int available) throws SQLException {
        try (Connection c = db.getConnection();
             PreparedStatement st = c.prepareStatement("INSERT INTO stock VALUES (?, ?) ON CONFLICT (item) DO UPDATE SET available = excluded.available")) {
            st.setString(1, item);
            st.setInt(2, available);
            st.executeUpdate();
        }
    }

    /**
     * Records an order, enqueues its confirmation mail and takes the item from stock, all in one
     * transaction: when the stock runs out, the order and its job are rolled back together.
     *
     * @return the new order's id
     * @throws SQLException if the item is out of stock (the stock table's CHECK refuses), or the database fails
     */
    public long placeOrder(String email, String item) throws SQLException {
        try (Connection c = db.getConnection()) {
            c.setAutoCommit(false);
            try {
                long orderId = insertOrder(c, email, item);
                jobs.enqueue(c, NewJob.of(TenantId.DEFAULT, QueueName.DEFAULT, SEND_CONFIRMATION,
                        "{\"orderId\": " + orderId + "}"));
                takeFromStock(c, item);
                c.commit();                 // the order and its job exist from here on, and workers are woken
                return orderId;
            } catch (SQLException | RuntimeException e) {
                c.rollback();               // neither the order nor its job: no mail for an order that never was
                throw e;
            }
        }
    }

    private static long insertOrder(Connection c, String email, String item) throws SQLException {
        try (PreparedStatement st = c.prepareStatement("INSERT INTO orders (email, item) VALUES (?, ?) RETURNING id")) {
            st.setString(1, email);
            st.setString(2, item);
            try (ResultSet rs = st.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    private static void takeFromStock(Connection c, String item) throws SQLException {
        try (PreparedStatement st = c.prepareStatement("UPDATE stock SET available = available - 1 WHERE item = ?")) {
            st.setString(1, item);
            if (st.executeUpdate() == 0) throw new SQLException("no such item: " + item);
        }
    }
}
