package io.jobq.http;

import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.databind.JsonNode;
import io.jobq.domain.job.StoredText;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * Names places in a request body for error answers: the top-level field (which a 400 names in
 * {@code field}) and the path inside it (e.g. {@code payloads[3].n}, which the message quotes). Every
 * name is quoted by {@link StoredText#excerpt}, and a path is built only for the one place reported:
 * building one per value would cost depth × values, which a 1 MiB body of deep nesting and long keys
 * makes gigabytes.
 */
final class JsonPaths {
    private JsonPaths() {}

    /** The top-level key whose value the parser is inside, or null at the top level. */
    static String topLevelField(JsonStreamContext ctx) {
        JsonStreamContext c = ctx;
        while (c != null && c.getParent() != null && !c.getParent().inRoot()) c = c.getParent();
        return c == null || c.getCurrentName() == null ? null : StoredText.excerpt(c.getCurrentName());
    }

    /** Where the parser is: {@code payloads[3].n}, or "the body" at the top level. */
    static String of(JsonStreamContext ctx) {
        Deque<String> parts = new ArrayDeque<>();
        for (JsonStreamContext c = ctx; c != null && !c.inRoot(); c = c.getParent()) {
            if (c.inArray()) parts.push("[" + c.getCurrentIndex() + "]");
            else if (c.getCurrentName() != null) parts.push((c.getParent().inRoot() ? "" : ".") + c.getCurrentName());
        }
        if (parts.isEmpty()) return "the body";
        StringBuilder out = new StringBuilder();
        parts.forEach(out::append);
        return StoredText.excerpt(out);
    }

    /** A string value or object key {@link #find} picked: where it is (e.g. {@code payloads[3].s}), whether it is a key, and why. */
    record Found(String where, boolean key, String why) {}

    /**
     * Depth first, in document order, the first string value or object key in {@code value} of which
     * {@code why} says something. Iterative, so depth cannot overflow the stack.
     *
     * @param name what to call {@code value} itself, e.g. "payload"
     */
    static Optional<Found> find(String name, JsonNode value, Function<String, Optional<String>> why) {
        record Step(Path path, JsonNode node) {}
        Deque<Step> todo = new ArrayDeque<>();
        todo.push(new Step(new Path(null, name), value));
        while (!todo.isEmpty()) {
            Step step = todo.pop();
            JsonNode node = step.node();
            if (node.isTextual()) {
                Optional<String> bad = why.apply(node.textValue());
                if (bad.isPresent()) return Optional.of(new Found(step.path().toString(), false, bad.get()));
            } else if (node.isObject()) {
                List<Step> children = new ArrayList<>(node.size());
                for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
                    Map.Entry<String, JsonNode> f = it.next();
                    Optional<String> bad = why.apply(f.getKey());
                    if (bad.isPresent()) return Optional.of(new Found(step.path().toString(), true, bad.get()));
                    children.add(new Step(new Path(step.path(), "." + f.getKey()), f.getValue()));
                }
                for (int i = children.size() - 1; i >= 0; i--) todo.push(children.get(i));
            } else if (node.isArray()) {
                for (int i = node.size() - 1; i >= 0; i--) todo.push(new Step(new Path(step.path(), "[" + i + "]"), node.get(i)));
            }
        }
        return Optional.empty();
    }

    /** One step of a path inside a JSON value, linked to its parent: {@code payloads}, {@code [3]}, {@code .s}. */
    private record Path(Path parent, String segment) {
        /** The whole path, e.g. {@code payloads[3].s}, quoted by {@link StoredText#excerpt}. */
        @Override
        public String toString() {
            Deque<String> segments = new ArrayDeque<>();
            for (Path p = this; p != null; p = p.parent()) segments.push(p.segment());
            StringBuilder out = new StringBuilder();
            segments.forEach(out::append);
            return StoredText.excerpt(out);
        }
    }
}
