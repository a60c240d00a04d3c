package io.jobq.http;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.StreamWriteConstraints;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.core.exc.StreamReadException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.javalin.http.Context;
import io.jobq.domain.job.JsonNumbers;
import io.jobq.domain.job.StoredText;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * Reads request bodies strictly: JSON media type (else 415), at most the size limit (else 413), valid
 * UTF-8, one JSON object with no duplicate keys and nothing after it, every number in it acceptable to
 * the domain (else 400).
 *
 * <p>Numbers are judged on their text before anything builds them ({@link #requireAcceptableNumbers}):
 * {@code 1e9999999999} has an exponent Java's {@code BigDecimal} cannot hold, and {@code 1e1000000000},
 * 12 bytes long, would be a gigabyte printed in full. After that check every number of the tree has at
 * most 1,000 digits as printed and costs nothing to compare, convert or quote.
 *
 * <p>Why not let Jackson read the bytes: its UTF-8 decoder reports some invalid sequences but not
 * every one in every position, and never names the field. Decoding first with a strict decoder and
 * substituting each malformed sequence by a lone surrogate (which valid UTF-8 can never produce)
 * turns "invalid bytes" into "a lone surrogate inside this string", which the field checks already
 * refuse, naming the field.
 */
final class JsonBodies {
    /**
     * Strict parsing: duplicate keys and trailing tokens are errors; floats keep their exact digits.
     * Jackson's own limits are set from the domain's, not left to Jackson's defaults: number literals
     * of at most {@link JsonNumbers#MAX_NUMBER_LENGTH} characters, and nesting (read and written) two
     * levels deeper than {@link JsonNumbers#MAX_NESTING_DEPTH}, for the body object and the
     * {@code payloads} array around a payload, whose own depth {@link JsonNumbers#unreadablePayload}
     * then judges with a message naming it.
     */
    static final ObjectMapper STRICT = JsonMapper.builder(JsonFactory.builder()
                    .streamReadConstraints(StreamReadConstraints.builder()
                            .maxNumberLength((int) JsonNumbers.MAX_NUMBER_LENGTH)
                            .maxNestingDepth(JsonNumbers.MAX_NESTING_DEPTH + 2)
                            .build())
                    // writing a payload back to text ({@link #toJson}) must not refuse what reading accepted
                    .streamWriteConstraints(StreamWriteConstraints.builder().maxNestingDepth(JsonNumbers.MAX_NESTING_DEPTH + 2).build())
                    .build())
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .build();

    /** Stands in for each malformed UTF-8 sequence; see the class comment. */
    static final char MALFORMED = '\uDFFF';

    private JsonBodies() {}

    /** A decoded body and whether any byte sequence in it was not UTF-8. */
    record Decoded(String text, boolean hadMalformedBytes) {}

    /**
     * The request body as a JSON object.
     *
     * @throws ApiException 415 if the Content-Type is not JSON (or names a charset other than UTF-8),
     *     413 if the body exceeds {@code maxBytes}, 400 if it is not one well-formed JSON object
     */
    static ObjectNode readObject(Context ctx, long maxBytes) {
        requireJsonContentType(ctx.header("Content-Type"));
        Decoded body = decodeUtf8(readLimited(ctx, maxBytes));
        requireAcceptableNumbers(body);
        JsonNode node;
        try {
            node = STRICT.readTree(body.text());
        } catch (StreamReadException e) {
            throw parseError(e, body.hadMalformedBytes());
        } catch (JsonProcessingException e) {
            // FAIL_ON_TRAILING_TOKENS reports through databind, not the parser
            throw new ApiException(400, "malformed_json", "body must hold exactly one JSON value: " + e.getOriginalMessage(), null);
        }
        if (node == null || node.isMissingNode()) throw new ApiException(400, "malformed_json", "body is empty; send a JSON object", null);
        if (!(node instanceof ObjectNode object)) {
            throw new ApiException(400, "not_an_object", "body must be a JSON object, was " + node.getNodeType().name().toLowerCase(Locale.ROOT), null);
        }
        if (body.hadMalformedBytes()) throw invalidEncoding(object);
        return object;
    }

    /**
     * The first pass over the body, with the same parser settings as the second: refuses the first number
     * literal {@link JsonNumbers#unacceptableNumber} refuses, naming the top-level field it is in and
     * its path (e.g. {@code payloads[3].n}), before anything turns a literal into a number. Reads
     * tokens only; syntax errors found on the way are reported as the tree read would report them.
     *
     * @throws ApiException 400 {@code invalid_field} for a number, {@code malformed_json} (or
     *     {@code duplicate_field}, {@code invalid_encoding}) for what the parser refuses
     */
    private static void requireAcceptableNumbers(Decoded body) {
        try (JsonParser p = STRICT.createParser(body.text())) {
            try {
                for (JsonToken t = p.nextToken(); t != null; t = p.nextToken()) {
                    // the path is printed only for a refused number: building it for each would cost depth × numbers
                    if (t.isNumeric() && JsonNumbers.unacceptableNumber("", p.getText()).isPresent()) {
                        String why = JsonNumbers.unacceptableNumber(JsonPaths.of(p.getParsingContext()), p.getText()).orElseThrow();
                        throw ApiException.invalid(JsonPaths.topLevelField(p.getParsingContext()), why);
                    }
                }
            } catch (StreamConstraintsException e) {
                // a number literal too long, nesting too deep: a limit, so the field is at fault, not the syntax
                String field = JsonPaths.topLevelField(p.getParsingContext());
                throw ApiException.invalid(field, (field == null ? "the body" : field) + " " + overLimit(e.getOriginalMessage()));
            }
        } catch (StreamReadException e) {
            throw parseError(e, body.hadMalformedBytes());
        } catch (IOException e) {
            throw new ApiException(400, "malformed_json", "body is not valid JSON: " + e.getMessage(), null);
        }
    }

    /** Jackson's message for a broken read limit, said in the API's terms (which limit, not which Jackson setting). */
    private static String overLimit(String jackson) {
        if (jackson.startsWith("Number value length")) {
            return "holds a number written with more than " + JsonNumbers.MAX_NUMBER_LENGTH + " characters";
        }
        if (jackson.startsWith("Document nesting depth")) {
            return "nests arrays and objects more than " + JsonNumbers.MAX_NESTING_DEPTH + " levels deep, which a worker's JSON parser refuses";
        }
        return "is refused: " + jackson;
    }

    /**
     * Names the top-level field whose key or value (at any depth) holds a malformed sequence; the
     * message gives the path to it, e.g. {@code payloads[6].s}.
     */
    private static ApiException invalidEncoding(ObjectNode object) {
        for (Iterator<Map.Entry<String, JsonNode>> it = object.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> f = it.next();
            String field = StoredText.excerpt(f.getKey());
            Optional<String> where = f.getKey().indexOf(MALFORMED) >= 0 ? Optional.of(field)
                    : JsonPaths.find(f.getKey(), f.getValue(), s -> s.indexOf(MALFORMED) >= 0 ? Optional.of("") : Optional.empty())
                            .map(found -> (found.key() ? "a key in " : "") + found.where());
            if (where.isPresent()) {
                return new ApiException(400, "invalid_encoding", where.get() + " contains bytes that are not valid UTF-8", field);
            }
        }
        return new ApiException(400, "invalid_encoding", "the body is not valid UTF-8", null);
    }

    static void requireJsonContentType(String header) {
        if (header == null || header.isBlank()) {
            throw new ApiException(415, "unsupported_media_type", "Content-Type must be application/json", null);
        }
        String[] parts = header.split(";", -1); // -1: ";;;" gives four empty parts, not none
        String mime = parts[0].trim().toLowerCase(Locale.ROOT);
        if (!mime.equals("application/json") && !(mime.startsWith("application/") && mime.endsWith("+json"))) {
            throw new ApiException(415, "unsupported_media_type", "Content-Type must be application/json, was " + StoredText.excerpt(mime), null);
        }
        for (int i = 1; i < parts.length; i++) {
            String[] kv = parts[i].trim().split("=", 2);
            if (kv.length == 2 && kv[0].trim().equalsIgnoreCase("charset")) {
                String charset = kv[1].trim().replace("\"", "");
                if (!charset.equalsIgnoreCase("utf-8") && !charset.equalsIgnoreCase("utf8")) {
                    throw new ApiException(415, "unsupported_media_type", "the body must be UTF-8, charset was " + StoredText.excerpt(charset), null);
                }
            }
        }
    }

    /** Reads at most maxBytes; one byte more means too large. Content-Length is checked first so a huge upload is refused unread. */
    static byte[] readLimited(Context ctx, long maxBytes) {
        long declared = ctx.req().getContentLengthLong();
        if (declared > maxBytes) throw tooLarge(maxBytes);
        try (InputStream in = ctx.req().getInputStream()) {
            ByteArrayOutputStream out = new ByteArrayOutputStream(declared > 0 ? (int) declared : 1024);
            byte[] buf = new byte[16 * 1024];
            long total = 0;
            int n;
            while ((n = in.read(buf)) != -1) {
                total += n;
                if (total > maxBytes) throw tooLarge(maxBytes);
                out.write(buf, 0, n);
            }
            return out.toByteArray();
        } catch (IOException e) {
            // the client closed early, sent less than it announced, or broke the chunked encoding
            throw new ApiException(400, "bad_request", "the request body could not be read: " + e.getMessage(), null);
        }
    }

    private static ApiException tooLarge(long maxBytes) {
        return new ApiException(413, "payload_too_large", "request body exceeds the limit of " + maxBytes + " bytes", null);
    }

    /** Strict UTF-8: each malformed sequence becomes {@link #MALFORMED} and is flagged, never silently replaced by U+FFFD. */
    static Decoded decodeUtf8(byte[] bytes) {
        CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        ByteBuffer in = ByteBuffer.wrap(bytes);
        CharBuffer out = CharBuffer.allocate(bytes.length + 16);
        boolean malformed = false;
        while (true) {
            CoderResult r = decoder.decode(in, out, true);
            if (r.isError()) {
                malformed = true;
                out.put(MALFORMED);
                in.position(in.position() + r.length());
            } else if (r.isOverflow()) {
                CharBuffer bigger = CharBuffer.allocate(out.capacity() * 2);
                out.flip();
                out = bigger.put(out);
            } else {
                break;
            }
        }
        decoder.flush(out);
        out.flip();
        return new Decoded(out.toString(), malformed);
    }

    private static ApiException parseError(StreamReadException e, boolean hadMalformedBytes) {
        String field = null;
        if (e.getProcessor() instanceof JsonParser p) field = JsonPaths.topLevelField(p.getParsingContext());
        String message = e.getOriginalMessage();
        if (message != null && message.startsWith("Duplicate")) {
            return new ApiException(400, "duplicate_field", "a JSON object repeats a key: " + message, field);
        }
        if (hadMalformedBytes) {
            return new ApiException(400, "invalid_encoding", "the body is not valid UTF-8", field);
        }
        if (message != null && message.contains("surrogate")) {
            // Jackson itself refuses a broken surrogate pair in a key: the same fault as a lone surrogate in a value
            return ApiException.invalid(field, (field == null ? "a key" : "a key in " + field) + " contains a lone surrogate, which is not valid Unicode");
        }
        long line = e.getLocation() == null ? -1 : e.getLocation().getLineNr();
        long column = e.getLocation() == null ? -1 : e.getLocation().getColumnNr();
        return new ApiException(400, "malformed_json", "body is not valid JSON at line " + line + ", column " + column + ": " + message, field);
    }

    /**
     * The first thing in {@code value} PostgreSQL's jsonb cannot store, as a message, or empty when
     * it is storable: a NUL or lone surrogate (also: malformed UTF-8) in any string or object key at
     * any depth. (Numbers were judged while reading, see {@link #requireAcceptableNumbers}: each has at
     * most 1,000 digits, far inside numeric's range.) Iterative, so nesting depth cannot overflow the stack.
     *
     * @param name what to call the value in the message, e.g. "payload" or "payloads[3]"
     */
    static Optional<String> unstorable(String name, JsonNode value) {
        return JsonPaths.find(name, value, JsonBodies::badText).map(f -> (f.key() ? "a key in " : "") + f.where() + " " + f.why());
    }

    /** Why {@code s} cannot be stored (NUL, lone surrogate, malformed UTF-8), or empty. */
    static Optional<String> badText(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == 0) return Optional.of("contains the NUL character (\\u0000), which PostgreSQL cannot store");
            if (Character.isHighSurrogate(c)) {
                if (i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                    i++;
                    continue;
                }
                return Optional.of("contains a lone surrogate (\\u" + Integer.toHexString(c) + "), which is not valid Unicode");
            }
            if (c == MALFORMED || Character.isLowSurrogate(c)) {
                return Optional.of("contains invalid UTF-8 bytes or a lone surrogate, which is not valid Unicode");
            }
        }
        return Optional.empty();
    }

    /** Serialises a validated payload node back to JSON text for the store. */
    static String toJson(JsonNode node) {
        try {
            return STRICT.writeValueAsString(node);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a parsed JSON tree failed to serialise", e);
        }
    }
}
