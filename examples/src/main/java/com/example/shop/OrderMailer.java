package com.example.shop;

/** The shop's own service that the confirmation handler needs: how a real application hands a handler its objects. */
public interface OrderMailer {

    /**
     * Mails the confirmation of order {@code orderId} to {@code email}. A job may run more than once
     * (delivery is at-least-once), so a real mailer passes {@code idempotencyKey} to its provider.
     */
    void sendConfirmation(String email, long orderId, String idempotencyKey);
}
