package io.jobq.domain.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class IdentifierTest {
    @ParameterizedTest(name = "\"{0}\"")
    @ValueSource(strings = {"a", "Z", "0", "_", ".", ":", "-", "billing.emails:v2-eu_1", "AZaz09"})
    void namesOfTheAlphabetPass(String name) {
        assertThat(Identifier.isValid(name)).isTrue();
        assertThat(Identifier.check("task", name)).isSameAs(name);
    }

    @Test
    void oneHundredTwentyEightCharactersPassAndOneMoreDoesNot() {
        assertThat(Identifier.isValid("x".repeat(128))).isTrue();
        assertThat(Identifier.isValid("x".repeat(129))).isFalse();
        assertThatThrownBy(() -> Identifier.check("queue", "x".repeat(129)))
                .hasMessage("queue must be 1-128 characters of [A-Za-z0-9_.:-], was 129 characters long");
    }

    /** Every char just outside each range of the alphabet, and what a hostile name would carry. */
    @ParameterizedTest(name = "\"{0}\"")
    @ValueSource(strings = {"", " ", "a b", "/", ";", "@", "[", "^", "`", "{", "~", ",", "+", "é", "\uDE00", "\u0000", "a\n", "\uD83D",
            "\uD83D\uDE00", "\u0661", "ｔask"})
    void anythingElseIsRefusedNamingTheField(String name) {
        assertThat(Identifier.isValid(name)).isFalse();
        assertThatThrownBy(() -> Identifier.check("tenant", name)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("tenant must be 1-128 characters of [A-Za-z0-9_.:-], was ");
    }

    @Test
    void nullIsNotANameAndCheckSaysWhichField() {
        assertThat(Identifier.isValid(null)).isFalse();
        assertThatThrownBy(() -> Identifier.check("task", null)).isInstanceOf(NullPointerException.class).hasMessage("task");
    }
}
