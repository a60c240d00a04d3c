package io.jobq.domain.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

class JsonNumbersTest {

    /** Expected renderings are what PostgreSQL 15 returns for {@code ('[' || literal || ']')::jsonb::text}. */
    @ParameterizedTest(name = "{0} renders as {1}")
    @CsvSource({
            "1e5, 100000",
            "1.50, 1.50",
            "1.5e-7, 0.00000015",
            "-0.0e3, 0",
            "0e-5, 0.00000",
            "12.345e1, 123.45",
            "1E+2, 100",
            "100e-2, 1.00",
            "-1.5E-1, -0.15",
            "0.000, 0.000",
            "1e0, 1",
            "-0, 0",
            "123456789012345678901234567890, 123456789012345678901234567890",
            "0.0012e2, 0.12",
            "42, 42",
            "-7, -7"})
    void renderedLengthMatchesPostgresql(String literal, String rendered) {
        assertThat(JsonNumbers.renderedLength(literal, 0, literal.length())).isEqualTo(rendered.length());
    }

    @Test
    void theExtremesOfNumericsRange() {
        assertThat(JsonNumbers.renderedLength("1e131071", 0, 8)).isEqualTo(131_072);
        assertThat(JsonNumbers.renderedLength("2.5e-400", 0, 8)).isEqualTo(403);
        assertThat(JsonNumbers.renderedLength("1e999999999999999999", 0, 20)).as("saturates, no overflow").isPositive();
    }

    @Test
    void growthSumsOverNumbersAndSkipsStringsAndKeys() {
        assertThat(JsonNumbers.renderedGrowth("{\"a\": 1, \"b\": [2.5, true, null], \"c\": \"x\"}")).isZero();
        assertThat(JsonNumbers.renderedGrowth("[1e5, 1e5]")).isEqualTo(2 * (6 - 3));
        assertThat(JsonNumbers.renderedGrowth("{\"1e131071\": \"1e131071 \\\" 1e131071\"}"))
                .as("numbers inside strings and keys, escaped quote included, are text").isZero();
        assertThat(JsonNumbers.renderedGrowth("[-0.0e3]")).as("shrinking counts as zero").isZero();
    }

    @Test
    void aFewBytesThatWouldRenderPastTheLimitAreRefusedNamingTheValue() {
        String tiny = "[" + "1e131071,".repeat(9) + "1e131071]";
        assertThat(tiny.length()).isLessThan(100);
        assertThat(JsonNumbers.renderedGrowth(tiny)).isGreaterThan(JsonNumbers.MAX_RENDERED_GROWTH);

        assertThatThrownBy(() -> JsonNumbers.requireReadableBack("payload", tiny))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("payload ").hasMessageContaining("131,072 digits");
    }

    @Test
    void aSingleNumberLongerThanAWorkersParserAcceptsIsRefused() {
        assertThat(JsonNumbers.measure("[1e999]").mostDigits()).isEqualTo(1_000);
        JsonNumbers.requireReadableBack("payload", "{\"n\": 1e999}");
        JsonNumbers.requireReadableBack("payload", "[-1e999, 1e-999]");  // sign and point are not digits
        assertThatThrownBy(() -> JsonNumbers.requireReadableBack("payload", "{\"n\": 1e1000}"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("1001 digits");
        assertThatThrownBy(() -> JsonNumbers.requireReadableBack("payload", "[1e-1000]"))
                .as("0. and 1,000 fraction digits").hasMessageContaining("1001 digits");
    }

    @Test
    void nestingDeeperThanAWorkersParserAcceptsIsRefused() {
        String deepest = "[".repeat(1_000) + "]".repeat(1_000);
        assertThat(JsonNumbers.measure(deepest).maxDepth()).isEqualTo(1_000);
        JsonNumbers.requireReadableBack("payload", deepest);
        JsonNumbers.requireReadableBack("payload", "{\"a\": \"[[[[[[\"}");  // brackets in strings are text
        assertThatThrownBy(() -> JsonNumbers.requireReadableBack("payload", "{\"a\": " + "[".repeat(1_000) + "]".repeat(1_000) + "}"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("1001 levels");
    }

    @Test
    void aPayloadOverOneMebibyteOfUtf8IsRefusedNamingItsSize() {
        String atLimit = "\"" + "x".repeat(Job.MAX_PAYLOAD_BYTES - 2) + "\"";
        JsonNumbers.requireReadableBack("payload", atLimit);
        // 'é' is two bytes in UTF-8: the limit counts bytes, not characters
        String over = "\"" + "é".repeat(Job.MAX_PAYLOAD_BYTES / 2) + "\"";
        assertThat(over.length()).isLessThan(Job.MAX_PAYLOAD_BYTES);
        assertThatThrownBy(() -> JsonNumbers.requireReadableBack("payloads[3]", over))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("payloads[3] is " + (Job.MAX_PAYLOAD_BYTES + 2) + " bytes of JSON text (UTF-8), more than 1048576 (1 MiB)");
    }

    @Test
    void everyDoubleFitsEasily() {
        String doubles = "[" + Double.MAX_VALUE + ", " + Double.MIN_VALUE + ", " + -Double.MAX_VALUE + "]";
        assertThat(JsonNumbers.renderedGrowth(doubles)).isLessThan(1_000);
        JsonNumbers.requireReadableBack("payload", doubles);
    }

    /** Issue 11: the rule for every number in a request, judged on the text without building the number. */
    @ParameterizedTest(name = "{0} is refused: {1}")
    @CsvSource(delimiter = '|', textBlock = """
            1e9999999999         | exponent is beyond
            -1e-2147483648       | exponent is beyond
            0e9999999999         | exponent is beyond
            1e99999999999999999999 | exponent is beyond
            1e1000000000         | 1000000001 digits
            1e2147483647         | exponent is beyond
            1e1000               | 1001 digits
            1e-1000              | 1001 digits
            -0.0e-1000           | 1002 digits
            1e131071             | 131072 digits""")
    void aNumberThatWouldPrintTooLongOrHasAHugeExponentIsRefused(String literal, String why) {
        assertThat(JsonNumbers.unacceptableNumber("delay_seconds", literal)).hasValueSatisfying(m ->
                assertThat(m).startsWith("delay_seconds holds the number " + literal).contains(why).hasSizeLessThan(200));
    }

    @ParameterizedTest(name = "{0} is accepted")
    @CsvSource({"0", "-0", "1", "1.5e-7", "31536000", "1e999", "-1e-999", "0e999999999", "0e-999", "1.7976931348623157E308",
            "4.9e-324", "123456789012345678901234567890"})
    void numbersThatPrintWithAtMost1000DigitsAreAccepted(String literal) {
        assertThat(JsonNumbers.unacceptableNumber("payload", literal)).isEmpty();
        new java.math.BigDecimal(literal); // and can then be built
    }
}
