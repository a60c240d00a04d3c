package io.jobq.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;

/**
 * Jetty refuses some requests before Javalin sees them (a path with an encoded NUL, invalid UTF-8 or
 * another ambiguous segment, a request target such as {@code *}, a malformed header line, an oversized
 * header). This answers those in the API's JSON error shape too, instead of Jetty's HTML page, for
 * every method (Jetty's own handler writes a body only for GET, POST and HEAD): code
 * {@code bad_request} (or {@code not_found}, {@code payload_too_large}, {@code internal_error} by
 * status), no stack trace, bounded like every {@link ProblemResponse}.
 */
final class JsonErrorHandler extends ErrorHandler {
    @Override
    public boolean errorPageForMethod(String method) {
        return true;
    }

    @Override
    protected void generateResponse(Request request, Response response, int code, String message, Throwable cause, Callback callback) {
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
        response.write(true, ByteBuffer.wrap(body(code, message)), callback);
    }

    /** For a request so malformed that Jetty answers from the connection, without a request to handle. */
    @Override
    public ByteBuffer badMessageError(int status, String reason, HttpFields.Mutable fields) {
        fields.put(HttpHeader.CONTENT_TYPE, "application/json");
        return ByteBuffer.wrap(body(status, reason));
    }

    private static byte[] body(int code, String message) {
        String errorCode = code == 404 ? "not_found" : code == 413 ? "payload_too_large" : code >= 500 ? "internal_error" : "bad_request";
        String text = code >= 500 ? "internal error" : "the request was refused by the HTTP server: " + (message == null ? "status " + code : message);
        try {
            return Responses.OUT.writeValueAsBytes(ProblemResponse.of(errorCode, text, null));
        } catch (JsonProcessingException e) {
            return "{\"error\":{\"code\":\"internal_error\",\"message\":\"internal error\"}}".getBytes(StandardCharsets.UTF_8);
        }
    }
}
