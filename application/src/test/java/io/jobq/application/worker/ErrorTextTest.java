package io.jobq.application.worker;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ErrorTextTest {

    @Test
    void aShortCleanMessageIsUnchanged() {
        assertThat(ErrorText.sanitise("connection refused")).isEqualTo("connection refused");
    }

    @Test
    void nulCharactersAreRemoved() {
        assertThat(ErrorText.sanitise("a\u0000b\u0000")).isEqualTo("ab");
    }

    @Test
    void loneSurrogatesBecomeReplacementCharacters() {
        assertThat(ErrorText.sanitise("x\ud800y\udc00")).isEqualTo("x\uFFFDy\uFFFD");
        assertThat(ErrorText.sanitise("😀")).isEqualTo("😀");
    }

    @Test
    void aLongMessageIsCutToTheBoundWithAMarker() {
        String cut = ErrorText.sanitise("x".repeat(100_000));

        assertThat(cut.getBytes(StandardCharsets.UTF_8)).hasSizeLessThanOrEqualTo(8192);
        assertThat(cut).startsWith("xxxx").endsWith("… [truncated, 100000 bytes]");
    }

    @ParameterizedTest(name = "bound {0} bytes")
    @ValueSource(ints = {64, 65, 66, 67, 100, 101, 102, 103})
    void truncationNeverSplitsAFourByteCodePoint(int bound) {
        String cut = ErrorText.sanitise("😀".repeat(100), bound);
        String kept = cut.substring(0, cut.indexOf(ErrorText.TRUNCATION_MARKER));

        assertThat(cut.getBytes(StandardCharsets.UTF_8).length).isLessThanOrEqualTo(bound);
        assertThat(kept.codePoints()).containsOnly("😀".codePointAt(0));
        assertThat(new String(cut.getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8)).isEqualTo(cut);
    }

    @Test
    void sanitisingIsIdempotent() {
        String once = ErrorText.sanitise("é".repeat(10_000) + "\u0000");
        assertThat(ErrorText.sanitise(once)).isEqualTo(once);
    }
}
