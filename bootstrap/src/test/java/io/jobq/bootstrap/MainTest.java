package io.jobq.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The command line reaches {@link Settings}: a bad value is refused, naming the flag, before any database work. */
class MainTest {

    @ParameterizedTest
    @ValueSource(strings = {"worker", "all"})
    void aBadTaskTimeoutFlagExitsWithTheUsageCodeNamingTheFlagAndTheEntry(String role) {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream original = System.err;
        int exit;
        try {
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            exit = Main.run(role, "--task-timeout", "sleep=5s,report=soon");
        } finally {
            System.setErr(original);
        }
        assertThat(exit).isEqualTo(Main.EXIT_USAGE);
        assertThat(err.toString(StandardCharsets.UTF_8))
                .contains("jobq: invalid --task-timeout=\"sleep=5s,report=soon\": entry \"report=soon\": expected a duration");
    }
}
