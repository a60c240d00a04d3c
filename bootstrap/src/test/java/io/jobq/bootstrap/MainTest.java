package io.jobq.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The command line: a subcommand per {@link Role}, each taking the flags of the settings that apply to
 * it; a bad value is refused, naming the flag, before any database work.
 */
class MainTest {
    private static final Set<String> COMMON = Set.of("--database-url", "--schema", "--pool-size", "--log-level", "--bind");
    private static final Set<String> HTTP = Set.of("--port", "--max-request-bytes");
    /** The keys: of the API, and of a worker's metrics port. */
    private static final Set<String> SERVED = Set.of("--admin-key", "--admin-key-file", "--metrics-key");
    private static final Set<String> WORKER = Set.of("--concurrency", "--queues", "--lease", "--heartbeat",
            "--poll-interval", "--claim-batch", "--prefetch", "--grace-period", "--maintenance-interval", "--listen", "--worker-id",
            "--metrics-port", "--task-timeout", "--self-vacuum");

    @Test
    void thereIsASubcommandPerRoleAndHelp() {
        assertThat(Main.commandLine().getSubcommands().keySet()).containsExactly("migrate", "api", "worker", "all", "help");
    }

    @ParameterizedTest
    @EnumSource(Role.class)
    void eachRoleTakesTheFlagsItTookBeforeTheyWereDerived(Role role) {
        Set<String> expected = new HashSet<>(COMMON);
        if (role == Role.API || role == Role.ALL) expected.addAll(HTTP);
        if (role == Role.WORKER || role == Role.ALL) expected.addAll(WORKER);
        if (role != Role.MIGRATE) expected.addAll(SERVED);
        assertThat(settingFlags(role)).containsExactlyInAnyOrderElementsOf(expected);
    }

    @ParameterizedTest
    @EnumSource(Role.class)
    void everyOptionOfARoleIsADeclaredSettingThatAppliesToIt(Role role) {
        List<String> applying = Settings.all().stream().filter(s -> s.appliesTo(role)).map(Setting::flag).toList();
        assertThat(settingFlags(role)).containsExactlyInAnyOrderElementsOf(applying);
    }

    @ParameterizedTest
    @EnumSource(Role.class)
    void helpShowsEachFlagWithItsVariableAndDefault(Role role) {
        String help = Main.commandLine().getSubcommands().get(role.command()).getUsageMessage(CommandLine.Help.Ansi.OFF);
        for (Setting<?> s : Settings.all()) {
            if (s.appliesTo(role)) {
                assertThat(help).contains(s.flag() + "=" + s.type().label(), "Env " + s.env() + ".");
            } else {
                assertThat(help).doesNotContain(s.flag());
            }
        }
        assertThat(help.replaceAll("\\s+", " ")).contains(role.description());
    }

    @ParameterizedTest
    @ValueSource(strings = {"worker", "all"})
    void aBadTaskTimeoutFlagExitsWithTheUsageCodeNamingTheFlagAndTheEntry(String role) {
        Run run = run(role, "--task-timeout", "sleep=5s,report=soon");
        assertThat(run.exit).isEqualTo(Main.EXIT_USAGE);
        assertThat(run.err)
                .contains("jobq: invalid --task-timeout=\"sleep=5s,report=soon\": entry \"report=soon\": expected a duration");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            migrate | --pool-size         | 0  | jobq: invalid --pool-size="0": must be from 1 to 200
            api     | --max-request-bytes | 10 | jobq: invalid --max-request-bytes="10": must be from 1024 to 2147483647
            worker  | --heartbeat         | 1m | jobq: --heartbeat must be shorter than the lease (30000 ms)
            """)
    void eachRolesFlagsReachTheSettings(String role, String flag, String value, String message) {
        Run run = run(role, flag, value);
        assertThat(run.exit).isEqualTo(Main.EXIT_USAGE);
        assertThat(run.err).contains(message);
    }

    @ParameterizedTest
    @CsvSource({"api, --concurrency", "migrate, --port", "worker, --max-request-bytes"})
    void aFlagOfAnotherRoleIsAnUnknownOption(String role, String flag) {
        Run run = run(role, flag, "4");
        assertThat(run.exit).isEqualTo(Main.EXIT_USAGE);
        assertThat(run.err).startsWith("Unknown option").contains("'" + flag + "'");
    }

    @Test
    void aMistypedFlagIsNamedWithoutItsValueWhichMayBeASecret() {
        Run run = run("api", "--admin-kye=super-secret-value-0123456789");
        assertThat(run.exit).isEqualTo(Main.EXIT_USAGE);
        assertThat(run.err).contains("--admin-kye").doesNotContain("super-secret-value");
    }

    @Test
    void variablesThatLookLikeJobqsButAreNoneOfItsSettingsAreNamed() {
        assertThat(Settings.unknownVariables(List.of("JOBQ_DATABASE_URL", "JOBQ_LEASE", "JOBQ_HANDLER_SHOUT_SUFFIX",
                "JOBQ_TEST_DATABASE_URL", "PATH", "JOBQ_CONCURENCY"))).containsExactly("JOBQ_CONCURENCY", "JOBQ_DATABASE_URL");
    }

    private static Set<String> settingFlags(Role role) {
        CommandLine sub = Main.commandLine().getSubcommands().get(role.command());
        return sub.getCommandSpec().options().stream()
                .filter(o -> !o.usageHelp() && !o.versionHelp())
                .map(OptionSpec::longestName)
                .collect(Collectors.toSet());
    }

    private record Run(int exit, String err) {}

    private static Run run(String... args) {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream original = System.err;
        try {
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            int exit = Main.run(args);
            return new Run(exit, err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setErr(original);
        }
    }
}
