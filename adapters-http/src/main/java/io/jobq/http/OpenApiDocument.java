package io.jobq.http;

import io.javalin.http.Context;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/**
 * {@code GET /openapi.json}: the API described in OpenAPI 3.1 (every endpoint, request and answer, and the
 * error shape), kept as a resource next to this class. It is written by hand and checked against the code by
 * {@code OpenApiDocumentTest}: every route the server has must be in it and nothing else, each request
 * schema must list exactly the fields its endpoint accepts, and each answer schema the fields its view has,
 * so a route or field added without the document fails the build.
 */
final class OpenApiDocument {
    static final String RESOURCE = "openapi.json";

    private final byte[] bytes;

    OpenApiDocument() {
        try (InputStream in = OpenApiDocument.class.getResourceAsStream(RESOURCE)) {
            if (in == null) throw new IllegalStateException("the OpenAPI document " + RESOURCE + " is missing from the jar");
            this.bytes = in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Serves the document; query parameters are ignored, as tools add their own. */
    void serve(Context ctx) {
        ctx.status(200).contentType("application/json").result(bytes);
    }
}
