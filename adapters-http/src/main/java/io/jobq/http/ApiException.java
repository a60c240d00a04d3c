package io.jobq.http;

import java.util.Objects;

/**
 * A request the API refuses, with the status and the {@link ProblemResponse} to answer. Thrown by
 * parsing and routes; turned into a response in exactly one place ({@link HttpApi}'s exception mapping).
 *
 * <p>Codes: {@code malformed_json}, {@code invalid_encoding}, {@code not_an_object},
 * {@code duplicate_field}, {@code unknown_field}, {@code missing_field}, {@code invalid_field},
 * {@code bad_request} (400); {@code unauthorized} (401, see {@link Authenticator}); {@code forbidden} (403);
 * {@code job_not_found}, {@code schedule_not_found}, {@code key_not_found}, {@code not_found} (404); {@code method_not_allowed} (405); {@code job_not_dead}
 * (409); {@code payload_too_large} (413); {@code unsupported_media_type} (415);
 * {@code store_unavailable} (503); {@code internal_error} (500).
 */
public final class ApiException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final int status;
    private final String code;
    private final String field;

    public ApiException(int status, String code, String message, String field) {
        super(Objects.requireNonNull(message, "message"), null, false, false);
        this.status = status;
        this.code = Objects.requireNonNull(code, "code");
        this.field = field;
    }

    /** 400 {@code invalid_field} naming {@code field}. */
    public static ApiException invalid(String field, String message) {
        return new ApiException(400, "invalid_field", message, field);
    }

    public int status() {
        return status;
    }

    public String code() {
        return code;
    }

    /** The offending field, or null. */
    public String field() {
        return field;
    }

    public ProblemResponse problem() {
        return ProblemResponse.of(code, getMessage(), field);
    }
}
