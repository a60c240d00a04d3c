package io.jobq.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeType;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.jobq.domain.job.Identifier;
import io.jobq.domain.job.StoredText;
import java.math.BigDecimal;
import java.util.Iterator;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Typed, exact access to the fields of a request object. Every failure is a 400 naming the field.
 * Types are checked here, exactly: an integer field refuses {@code 1.5}, {@code 3.0}, {@code "3"} and
 * {@code true}; a string field refuses numbers. Ranges and lengths are the domain's: each value is
 * handed to a domain rule ({@code JobLimits}, {@code TenantWeight}, {@code Identifier}) and the rule's
 * {@link IllegalArgumentException} becomes the 400, so the API and the domain cannot disagree. An
 * optional field given as JSON {@code null} counts as absent.
 *
 * <p>Numbers reach this class only after {@link JsonBodies} has checked every number literal of the
 * body ({@code JsonNumbers#unacceptableNumber}), so turning them into {@link BigDecimal}s is cheap.
 */
final class Fields {
    private final ObjectNode body;

    /** @throws ApiException 400 {@code unknown_field} naming the first field not in {@code allowed} */
    Fields(ObjectNode body, Set<String> allowed) {
        this(body, allowed, "");
    }

    /**
     * The fields of an object nested in a request, named {@code prefix + name} in errors (such as
     * {@code retention.done}).
     *
     * @throws ApiException 400 {@code unknown_field} naming the first field not in {@code allowed}
     */
    Fields(ObjectNode body, Set<String> allowed, String prefix) {
        this.body = body;
        for (Iterator<String> it = body.fieldNames(); it.hasNext(); ) {
            String name = it.next();
            if (!allowed.contains(name)) {
                String shown = prefix + StoredText.excerpt(name);
                throw new ApiException(400, "unknown_field", "unknown field \"" + shown + "\"; accepted: "
                        + String.join(", ", allowed.stream().sorted().toList()), shown);
            }
        }
    }

    /** The field's node, absent when missing or JSON null. */
    Optional<JsonNode> optional(String name) {
        JsonNode n = body.get(name);
        return n == null || n.isNull() ? Optional.empty() : Optional.of(n);
    }

    JsonNode required(String name) {
        return optional(name).orElseThrow(() -> new ApiException(400, "missing_field", name + " is required", name));
    }

    /**
     * Runs a domain rule on a value of field {@code name}.
     *
     * @throws ApiException 400 {@code invalid_field} naming {@code name}, with the rule's message
     */
    static <T> T checked(String name, Supplier<T> rule) {
        try {
            return rule.get();
        } catch (IllegalArgumentException e) {
            throw ApiException.invalid(name, e.getMessage());
        }
    }

    /** A name of 1-128 characters of [A-Za-z0-9_.:-] (task, tenant, queue): {@link Identifier}'s rule. */
    static String identifier(String name, JsonNode node) {
        if (!node.isTextual()) throw ApiException.invalid(name, name + " must be a string, was " + describe(node));
        return checked(name, () -> Identifier.check(name, node.textValue()));
    }

    String requiredIdentifier(String name) {
        return identifier(name, required(name));
    }

    String identifierOr(String name, String fallback) {
        return optional(name).map(n -> identifier(name, n)).orElse(fallback);
    }

    /** A JSON string, judged by {@code rule}. */
    <T> Optional<T> string(String name, Function<String, T> rule) {
        return optional(name).map(n -> {
            if (!n.isTextual()) throw ApiException.invalid(name, name + " must be a string, was " + describe(n));
            return checked(name, () -> rule.apply(n.textValue()));
        });
    }

    /** A JSON integer (no point, no exponent), judged by {@code rule}; {@code fallback} when absent. */
    <T> T integerOr(String name, Function<BigDecimal, T> rule, T fallback) {
        return optional(name).map(n -> {
            if (!n.isIntegralNumber()) throw ApiException.invalid(name, name + " must be an integer, was " + describe(n));
            return checked(name, () -> rule.apply(n.decimalValue()));
        }).orElse(fallback);
    }

    /** Any JSON number, exactly, judged by {@code rule}; {@code fallback} when absent. */
    <T> T numberOr(String name, Function<BigDecimal, T> rule, T fallback) {
        return optional(name).map(n -> number(name, n, rule)).orElse(fallback);
    }

    /** A required JSON number, exactly, judged by {@code rule}. */
    <T> T requiredNumber(String name, Function<BigDecimal, T> rule) {
        return number(name, required(name), rule);
    }

    private static <T> T number(String name, JsonNode n, Function<BigDecimal, T> rule) {
        if (!n.isNumber()) throw ApiException.invalid(name, name + " must be a number, was " + describe(n));
        return checked(name, () -> rule.apply(n.decimalValue()));
    }

    private static String describe(JsonNode n) {
        if (n.isTextual()) return "the string \"" + StoredText.excerpt(n.textValue()) + "\"";
        if (n.isContainerNode()) return "an " + (n.isArray() ? "array" : "object");
        if (n.getNodeType() == JsonNodeType.NUMBER) return "the number " + StoredText.excerpt(n.toString());
        return n.toString(); // true, false
    }
}
