package com.example.shop;

import com.fasterxml.jackson.databind.JsonNode;
import io.jobq.application.worker.JobContext;
import io.jobq.application.worker.JobHandler;
import io.jobq.application.worker.PermanentJobFailure;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.Optional;
import javax.sql.DataSource;

/** The handler of {@link Shop#SEND_CONFIRMATION}: looks the order up and mails it. Built with the shop's own objects. */
final class SendConfirmation implements JobHandler {
    /** The job's payload, e.g. {@code {"orderId": 42}}. */
    record Payload(long orderId) {}

    private final DataSource db;
    private final OrderMailer mailer;

    SendConfirmation(DataSource db, OrderMailer mailer) {
        this.db = db;
        this.mailer = mailer;
    }

    @Override
    public Optional<JsonNode> handle(JobContext ctx) throws Exception {
        long orderId = ctx.payloadAs(Payload.class).orderId();
        try (Connection c = db.getConnection();
             PreparedStatement st = c.prepareStatement("SELECT email FROM orders WHERE id = ?")) {
            st.setLong(1, orderId);
            try (ResultSet rs = st.executeQuery()) {
                // The job commits with its order, so a missing order is a bug: retrying cannot help.
                if (!rs.next()) throw new PermanentJobFailure("order " + orderId + " does not exist");
                mailer.sendConfirmation(rs.getString("email"), orderId, "confirmation-" + ctx.jobId());
            }
        }
        return Optional.empty();
    }
}
