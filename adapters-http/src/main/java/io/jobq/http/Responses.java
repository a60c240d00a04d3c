package io.jobq.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import io.javalin.http.Context;

/** Writes response bodies: snake_case JSON, instants as ISO-8601 UTC strings. */
final class Responses {
    static final ObjectMapper OUT = JsonMapper.builder()
            .propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
            .addModule(new JavaTimeModule())
            .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
            .build();

    private Responses() {}

    static void json(Context ctx, int status, Object body) {
        try {
            ctx.status(status).contentType("application/json").result(OUT.writeValueAsBytes(body));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot serialise a " + body.getClass().getSimpleName(), e);
        }
    }
}
