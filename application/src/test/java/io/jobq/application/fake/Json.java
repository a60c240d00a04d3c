package io.jobq.application.fake;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;

/**
 * The one JSON helper of every module's tests: parse text into a tree to compare JSON values (not
 * text: PostgreSQL's jsonb and Jackson re-render them), and build expected trees.
 */
public final class Json {
    /**
     * Jackson's defaults, except that it reads as deep as the API accepts payloads (2,000 levels;
     * Jackson's default stops at 1,000), so tests can read back the deepest payload they sent.
     */
    public static final ObjectMapper MAPPER = JsonMapper.builder(JsonFactory.builder()
            .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(2_000).build()).build()).build();

    private Json() {}

    /**
     * @param text JSON text
     * @return its tree
     * @throws AssertionError quoting {@code text} when it is not JSON
     */
    public static JsonNode json(String text) {
        try {
            return MAPPER.readTree(text);
        } catch (IOException e) {
            throw new AssertionError("not JSON: " + text, e);
        }
    }

    /** Like {@link #json(String)}, for UTF-8 bytes. */
    public static JsonNode json(byte[] utf8) {
        try {
            return MAPPER.readTree(utf8);
        } catch (IOException e) {
            throw new AssertionError("not JSON: " + new String(utf8, java.nio.charset.StandardCharsets.UTF_8), e);
        }
    }

    /** A new empty JSON object to build an expected value on. */
    public static ObjectNode object() {
        return MAPPER.createObjectNode();
    }

    /**
     * @param value what Jackson can serialise
     * @return its JSON text
     */
    public static String write(Object value) {
        try {
            return MAPPER.writeValueAsString(value);
        } catch (IOException e) {
            throw new AssertionError("cannot write " + value + " as JSON", e);
        }
    }
}
