package io.jobq.domain.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class JobIdTest {
    @ParameterizedTest(name = "{0}")
    @CsvSource({"1, 1", "007, 7", "9223372036854775807, 9223372036854775807"})
    void decimalDigitsParse(String text, long id) {
        assertThat(JobId.parse("id", text)).isEqualTo(JobId.of(id));
    }

    @ParameterizedTest(name = "\"{0}\"")
    @ValueSource(strings = {"", "0", "-1", "+5", " 1", "1.5", "1e3", "0x1", "abc", "9223372036854775808", "99999999999999999999",
            "\u0661", "1\u0000"})
    void anythingElseIsRefusedNamingTheField(String text) {
        assertThatThrownBy(() -> JobId.parse("after", text)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("after must be a job id, an integer 1-9223372036854775807, was \"");
    }

    @org.junit.jupiter.api.Test
    void aHugeTextIsQuotedShort() {
        assertThatThrownBy(() -> JobId.parse("id", "9".repeat(1_000_000)))
                .satisfies(e -> assertThat(e.getMessage()).hasSizeLessThan(200));
    }
}
