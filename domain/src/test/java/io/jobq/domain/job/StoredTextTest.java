package io.jobq.domain.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class StoredTextTest {

    @Nested
    class Excerpt {
        @Test
        void shortPrintableTextIsQuotedWhole() {
            assertThat(StoredText.excerpt("max_attemps")).isEqualTo("max_attemps");
        }

        @Test
        void longTextIsCutTo64CodePointsWithAnEllipsis() {
            assertThat(StoredText.excerpt("x".repeat(1_000_000))).isEqualTo("x".repeat(64) + "…");
            assertThat(StoredText.excerpt("x".repeat(64))).isEqualTo("x".repeat(64));
        }

        @Test
        void controlCharactersSurrogatesAndNonAsciiAreEscapedVisibly() {
            assertThat(StoredText.excerpt("a\u0000b\n\ud800é😀")).isEqualTo("a\\u0000b\\u000a\\ud800\\u00e9\\ud83d\\ude00");
        }

        @Test
        void noInputMakesItLong() {
            assertThat(StoredText.excerpt("\u0001".repeat(10_000))).hasSize(64 * 6 + 1);
            assertThat(StoredText.excerpt("😀".repeat(10_000))).hasSize(64 * 12 + 1);
        }
    }

    @Nested
    class Sanitize {
        @Test
        void aShortCleanMessageIsUnchanged() {
            assertThat(StoredText.sanitize("connection refused", 8192)).isEqualTo("connection refused");
        }

        @Test
        void nulBecomesTheReplacementCharacter() {
            assertThat(StoredText.sanitize("a\u0000b\u0000", 8192)).isEqualTo("a\uFFFDb\uFFFD");
        }

        @Test
        void loneSurrogatesBecomeReplacementCharactersAndPairsSurvive() {
            assertThat(StoredText.sanitize("x\ud800y\udc00", 8192)).isEqualTo("x\uFFFDy\uFFFD");
            assertThat(StoredText.sanitize("😀", 8192)).isEqualTo("😀");
        }

        @Test
        void aLongMessageIsCutToTheBoundWithAMarker() {
            String cut = StoredText.sanitize("x".repeat(100_000), 8192);
            assertThat(cut.getBytes(StandardCharsets.UTF_8)).hasSizeLessThanOrEqualTo(8192).hasSizeGreaterThan(8150);
            assertThat(cut).startsWith("xxxx").endsWith(StoredText.TRUNCATION_MARKER);
        }

        @Test
        void aMessageThatFitsExactlyGetsNoMarker() {
            String exact = "y".repeat(100);
            assertThat(StoredText.sanitize(exact, 100)).isEqualTo(exact);
            assertThat(StoredText.sanitize(exact + "y", 100)).endsWith(StoredText.TRUNCATION_MARKER);
        }

        @ParameterizedTest(name = "bound {0} bytes")
        @ValueSource(ints = {64, 65, 66, 67, 100, 101, 102, 103})
        void truncationNeverSplitsAFourByteCodePoint(int bound) {
            String cut = StoredText.sanitize("😀".repeat(100), bound);
            String kept = cut.substring(0, cut.indexOf(StoredText.TRUNCATION_MARKER));
            assertThat(cut.getBytes(StandardCharsets.UTF_8).length).isLessThanOrEqualTo(bound);
            assertThat(kept.codePoints()).containsOnly("😀".codePointAt(0));
            assertThat(new String(cut.getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8)).isEqualTo(cut);
        }

        @Test
        void sanitisingIsIdempotent() {
            String once = StoredText.sanitize("é".repeat(10_000) + "\u0000", 8192);
            assertThat(StoredText.sanitize(once, 8192)).isEqualTo(once);
        }

        @Test
        void nullBecomesEmptyAndATinyBoundIsRefused() {
            assertThat(StoredText.sanitize(null, 64)).isEmpty();
            assertThatThrownBy(() -> StoredText.sanitize("x", 31)).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Nested
    class Clean {
        @Test
        void replacesNulAndLoneSurrogatesWithoutBounding() {
            String big = "z".repeat(50_000);
            assertThat(StoredText.clean(big)).isSameAs(big);
            assertThat(StoredText.clean("a\u0000\ud800\uD83D\uDE00\udc00")).isEqualTo("a\uFFFD\uFFFD\uD83D\uDE00\uFFFD");
        }
    }
}
