package io.jobq.http;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import java.io.IOException;
import java.io.StringWriter;

/**
 * JSON text laid out for reading, token by token (Jackson's streaming parser and generator), so every value
 * is shown as stored: numbers keep their exact digits ({@code copyCurrentEventExact}), nothing is parsed into
 * doubles, and no tree is built.
 */
final class JsonText {
    private static final JsonFactory FACTORY = new JsonFactory();

    private JsonText() {}

    /**
     * {@code json} indented, cut to at most {@code max} characters; when it cannot be laid out (deeper or longer
     * numbers than the parser's limits), the text as stored, cut the same way.
     */
    static String pretty(String json, int max) {
        StringWriter out = new StringWriter();
        try (JsonParser in = FACTORY.createParser(json); JsonGenerator gen = FACTORY.createGenerator(out).useDefaultPrettyPrinter()) {
            while (in.nextToken() != null) {
                gen.copyCurrentEventExact(in);
                if (out.getBuffer().length() > max) break;
            }
        } catch (IOException | RuntimeException e) {
            return DashboardModels.excerpt(json, max);
        }
        return DashboardModels.excerpt(out.toString(), max);
    }
}
