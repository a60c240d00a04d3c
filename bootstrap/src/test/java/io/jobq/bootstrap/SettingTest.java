package io.jobq.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import picocli.CommandLine.Model.OptionSpec;

/**
 * Every declaration in {@link Settings} is complete and consistent. These run over {@link Settings#all()},
 * so a setting added tomorrow is checked without touching this class.
 */
class SettingTest {

    static List<Setting<?>> declared() {
        return Settings.all();
    }

    @ParameterizedTest
    @MethodSource("declared")
    void hasAVariableAFlagAndASentenceOfDoc(Setting<?> s) {
        assertThat(s.env()).matches("(JOBQ_)?[A-Z][A-Z0-9_]*");
        assertThat(s.flag()).matches("--[a-z][a-z0-9-]*");
        assertThat(s.doc()).isNotBlank().endsWith(".").doesNotContain("\n").doesNotContain("|");
        assertThat(s.type().label()).isNotBlank();
    }

    @ParameterizedTest
    @MethodSource("declared")
    void itsDefaultWrittenAsTextReadsBackAsTheDefault(Setting<?> s) {
        assertDefaultRoundTrips(s);
    }

    private static <T> void assertDefaultRoundTrips(Setting<T> s) {
        if (s.type().label().equals("KEY")) {
            // a secret: unset is the only "none", an empty text is refused (it must not open the API by accident)
            assertThat(s.defaultValue()).isEqualTo(Optional.empty());
            assertThatThrownBy(() -> s.type().parse(s.defaultText())).as(s.env()).isInstanceOf(IllegalArgumentException.class);
            assertThat(s.doc()).contains("Unset:");
            return;
        }
        assertThat(s.type().parse(s.defaultText())).as(s.env()).isEqualTo(s.defaultValue());
        // An empty default is an unset optional, and says in its doc what unset means.
        if (s.defaultText().isEmpty()) {
            assertThat(s.defaultValue()).isEqualTo(Optional.empty());
            assertThat(s.doc()).contains("Unset:");
        }
    }

    @ParameterizedTest
    @MethodSource("declared")
    void itsOptionIsTheFlagDescribedWithTheVariableTheDocAndTheDefault(Setting<?> s) {
        OptionSpec option = s.option();
        assertThat(option.names()).containsExactly(s.flag());
        assertThat(option.paramLabel()).isEqualTo(s.type().label());
        String description = String.join(" ", option.description());
        assertThat(description).startsWith("Env " + s.env() + ". " + s.plainDoc()).doesNotContain("`");
        if (!s.defaultText().isEmpty()) assertThat(description).endsWith(" Default: " + s.defaultText() + ".");
    }

    @Test
    void variablesAndFlagsAreUnique() {
        assertThat(declared()).extracting(Setting::env).doesNotHaveDuplicates();
        assertThat(declared()).extracting(Setting::flag).doesNotHaveDuplicates();
    }

    @ParameterizedTest
    @CsvSource({"JOBQ_POOL_SIZE, --pool-size", "DATABASE_URL, --database-url", "PORT, --port",
            "JOBQ_MAINTENANCE_INTERVAL, --maintenance-interval"})
    void theFlagIsTheVariableWithoutItsPrefixInKebabCase(String env, String flag) {
        Setting<Integer> s = new Setting<>(env, java.util.Set.of(), SettingType.integer("N", 0, 1), 0, "Doc.");
        assertThat(s.flag()).isEqualTo(flag);
    }

    @Test
    void aDeclarationWithoutDocIsRefused() {
        assertThatThrownBy(() -> new Setting<>("JOBQ_X", java.util.Set.of(), SettingType.bool(), true, " "))
                .hasMessage("JOBQ_X needs a doc");
    }
}
