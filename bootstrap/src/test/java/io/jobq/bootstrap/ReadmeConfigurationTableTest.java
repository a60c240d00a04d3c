package io.jobq.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * README's configuration table is written from the {@link Settings} declarations, never by hand: this
 * test fails, printing the table it expects, when the two differ (a setting added, renamed, re-documented
 * or given another default without the README following). To rewrite README's table in place, run it with
 * {@code -Djobq.readme.update=true}:
 * {@code ./mvnw -o -pl bootstrap -am test -Dtest=ReadmeConfigurationTableTest -Dsurefire.failIfNoSpecifiedTests=false -Djobq.readme.update=true}.
 */
class ReadmeConfigurationTableTest {
    static final String BEGIN = "<!-- configuration table: generated from bootstrap's Settings by ReadmeConfigurationTableTest -->";
    static final String END = "<!-- end of configuration table -->";
    /** Tests run in the module's folder; README is the repository's. */
    private static final Path README = Path.of("..", "README.md");

    @Test
    void readmesTableIsTheOneTheDeclarationsGive() throws IOException {
        String readme = Files.readString(README, StandardCharsets.UTF_8);
        int begin = readme.indexOf(BEGIN);
        int end = readme.indexOf(END);
        assertThat(begin).as("README.md has the marker %s", BEGIN).isNotNegative();
        assertThat(end).as("README.md has the marker %s after the first", END).isGreaterThan(begin);
        String expected = table();
        String actual = readme.substring(begin + BEGIN.length(), end).strip();
        if (!actual.equals(expected) && Boolean.getBoolean("jobq.readme.update")) {
            Files.writeString(README, readme.substring(0, begin + BEGIN.length()) + "\n\n" + expected + "\n\n"
                    + readme.substring(end), StandardCharsets.UTF_8);
            return;
        }
        assertThat(actual)
                .as("README.md's configuration table differs from the Settings declarations; expected:%n%s%n"
                        + "(rerun this test with -Djobq.readme.update=true to write it)", expected)
                .isEqualTo(expected);
    }

    /** The Markdown table: a row per declared setting, in declaration order. */
    static String table() {
        StringBuilder out = new StringBuilder("| variable | flag | roles | default | meaning |\n|---|---|---|---|---|\n");
        for (Setting<?> s : Settings.all()) {
            String roles = Arrays.stream(Role.values()).filter(s::appliesTo).map(Role::command)
                    .collect(Collectors.joining(", "));
            String defaultText = s.defaultText().isEmpty() ? "—" : "`" + s.defaultText() + "`";
            out.append("| `").append(s.env()).append("` | `").append(s.flag()).append("` | ").append(roles)
                    .append(" | ").append(defaultText).append(" | ").append(s.doc().replace("|", "\\|")).append(" |\n");
        }
        return out.toString().strip();
    }
}
