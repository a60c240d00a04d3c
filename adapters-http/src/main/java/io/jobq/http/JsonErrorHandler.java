package io.jobq.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import java.nio.ByteBuffer;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;

/**
 * Jetty refuses some requests before Javalin sees them (a path with an encoded NUL or other ambiguous
 * segment, a malformed header line, an oversized header). This answers those in the API's JSON error
 * shape too, instead of Jetty's HTML page: code {@code bad_request} (or {@code not_found} /
 * {@code internal_error} by status), no stack trace.
 */
final class JsonErrorHandler extends ErrorHandler {
    @Override
    protected void generateResponse(Request request, Response response, int code, String message, Throwable cause, Callback callback) {
        String errorCode = code == 404 ? "not_found" : code == 413 ? "payload_too_large" : code >= 500 ? "internal_error" : "bad_request";
        String text = code >= 500 ? "internal error" : "the request was refused by the HTTP server: " + (message == null ? "status " + code : message);
        byte[] body;
        try {
            body = Responses.OUT.writeValueAsBytes(ProblemResponse.of(errorCode, text, null));
        } catch (JsonProcessingException e) {
            body = "{\"error\":{\"code\":\"internal_error\",\"message\":\"internal error\"}}".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        }
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
        response.write(true, ByteBuffer.wrap(body), callback);
    }
}
