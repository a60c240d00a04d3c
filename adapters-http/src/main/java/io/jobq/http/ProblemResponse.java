package io.jobq.http;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * The body of every error answer: {@code {"error": {"code": "...", "message": "...", "field": "..."}}}.
 * {@code field} is present when one field is at fault (a body field such as {@code "max_attempts"}, a
 * query parameter such as {@code "limit"}, or a path parameter such as {@code "id"}), absent otherwise.
 */
public record ProblemResponse(Problem error) {

    /**
     * @param code stable, machine-readable: see {@link ApiException} for the list
     * @param message for humans; never a stack trace or SQL
     * @param field the offending field, or null
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Problem(String code, String message, String field) {}

    public static ProblemResponse of(String code, String message, String field) {
        return new ProblemResponse(new Problem(code, message, field));
    }
}
