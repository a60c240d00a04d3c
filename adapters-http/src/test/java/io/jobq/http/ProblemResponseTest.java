package io.jobq.http;

import static io.jobq.application.fake.Json.json;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.jobq.application.fake.Json;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Every error body is at most 4 KiB and valid JSON, whatever text it is built from. */
class ProblemResponseTest {

    @Test
    void aShortProblemIsUnchanged() throws Exception {
        ProblemResponse p = ProblemResponse.of("invalid_field", "max_attempts must be an integer 1-100, was 101", "max_attempts");
        assertThat(Json.write(p)).isEqualTo(
                "{\"error\":{\"code\":\"invalid_field\",\"message\":\"max_attempts must be an integer 1-100, was 101\",\"field\":\"max_attempts\"}}");
    }

    /** The worst texts for size: what JSON escapes (quotes, backslashes, control characters), 4-byte characters, lone surrogates. */
    @Test
    void anyTextGivesAtMost4KiBOfValidJson() throws Exception {
        String[] worst = {"\"".repeat(100_000), "\\".repeat(100_000), "\u0001".repeat(100_000), "😀".repeat(100_000),
                "\ud800".repeat(100_000), "\u0000".repeat(100_000), "x".repeat(1_000_000)};
        for (String text : worst) assertBounded(text, text, text);
        Random r = new Random(11);
        for (int i = 0; i < 2_000; i++) {
            StringBuilder s = new StringBuilder();
            for (int n = r.nextInt(20_000); n > 0; n--) s.append((char) r.nextInt(0x10000)); // any UTF-16 unit, surrogates included
            assertBounded(s.toString(), s.substring(0, s.length() / 2), s.substring(s.length() / 3));
        }
    }

    private static void assertBounded(String code, String message, String field) throws Exception {
        byte[] body = Responses.OUT.writeValueAsBytes(ProblemResponse.of(code, message, field));
        assertThat(body.length).isLessThanOrEqualTo(ProblemResponse.MAX_BODY_BYTES);
        JsonNode error = json(body).get("error");
        assertThat(error.get("message").isTextual()).isTrue();
    }
}
