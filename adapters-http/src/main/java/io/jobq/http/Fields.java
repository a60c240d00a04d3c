package io.jobq.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeType;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.jobq.domain.job.Identifier;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.Iterator;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * Typed, exact access to the fields of a request object. Every failure is a 400 naming the field.
 * Types are checked exactly: an integer field refuses {@code 1.5}, {@code "3"} and {@code true}; a
 * string field refuses numbers. An optional field given as JSON {@code null} counts as absent.
 */
final class Fields {
    /** Longest delay_seconds: 365 days. */
    static final long MAX_DELAY_SECONDS = 31_536_000L;

    private final ObjectNode body;

    /** @throws ApiException 400 {@code unknown_field} naming the first field not in {@code allowed} */
    Fields(ObjectNode body, Set<String> allowed) {
        this.body = body;
        for (Iterator<String> it = body.fieldNames(); it.hasNext(); ) {
            String name = it.next();
            if (!allowed.contains(name)) {
                String shown = JsonBodies.printable(name);
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

    /** A name of 1-128 characters of [A-Za-z0-9_.:-] (task, tenant, queue). */
    static String identifier(String name, JsonNode node) {
        if (!node.isTextual()) throw ApiException.invalid(name, name + " must be a string, was " + type(node));
        String value = node.textValue();
        try {
            return Identifier.check(name, value);
        } catch (IllegalArgumentException e) {
            throw ApiException.invalid(name, e.getMessage());
        }
    }

    String requiredIdentifier(String name) {
        return identifier(name, required(name));
    }

    String identifierOr(String name, String fallback) {
        return optional(name).map(n -> identifier(name, n)).orElse(fallback);
    }

    /** A string of {@code min..max} UTF-16 code units with no NUL and no lone surrogate. */
    Optional<String> text(String name, int min, int max) {
        return optional(name).map(n -> {
            if (!n.isTextual()) throw ApiException.invalid(name, name + " must be a string, was " + type(n));
            String v = n.textValue();
            JsonBodies.badText(v).ifPresent(why -> {
                throw ApiException.invalid(name, name + " " + why);
            });
            if (v.length() < min || v.length() > max) {
                throw ApiException.invalid(name, name + " must be " + min + "-" + max + " characters, was " + v.length());
            }
            return v;
        });
    }

    /** An exact JSON integer in {@code min..max}. */
    int integerOr(String name, int min, int max, int fallback) {
        return optional(name).map(n -> {
            if (!n.isIntegralNumber()) {
                throw ApiException.invalid(name, name + " must be an integer " + min + "-" + max + ", was " + describe(n));
            }
            if (!n.canConvertToInt() || n.intValue() < min || n.intValue() > max) {
                throw ApiException.invalid(name, name + " must be " + min + "-" + max + ", was " + n.asText());
            }
            return n.intValue();
        }).orElse(fallback);
    }

    /** A JSON number as an exact decimal. */
    static BigDecimal number(String name, JsonNode n, String range) {
        if (!n.isNumber()) throw ApiException.invalid(name, name + " must be a number " + range + ", was " + describe(n));
        return n.decimalValue();
    }

    /** delay_seconds: a number of seconds, 0..31,536,000, millisecond resolution; default 0. */
    Duration delayOr(String name, Duration fallback) {
        return optional(name).map(n -> {
            String range = "0-" + MAX_DELAY_SECONDS;
            BigDecimal seconds = number(name, n, range);
            if (seconds.signum() < 0 || seconds.compareTo(BigDecimal.valueOf(MAX_DELAY_SECONDS)) > 0) {
                throw ApiException.invalid(name, name + " must be " + range + ", was " + seconds.toPlainString());
            }
            return Duration.ofMillis(seconds.movePointRight(3).longValue());
        }).orElse(fallback);
    }

    private static String type(JsonNode n) {
        return n.getNodeType() == JsonNodeType.NUMBER ? "a number" : n.getNodeType().name().toLowerCase(Locale.ROOT);
    }

    private static String describe(JsonNode n) {
        if (n.isTextual()) return "the string \"" + JsonBodies.printable(n.textValue()) + "\"";
        if (n.isContainerNode()) return "an " + (n.isArray() ? "array" : "object");
        return n.toString();
    }
}
