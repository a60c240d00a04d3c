package io.jobq.bootstrap;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import io.jobq.application.worker.FatalErrorPolicy;
import io.jobq.bootstrap.Settings.InvalidSettingsException;
import java.io.PrintWriter;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Spec;

/**
 * {@code java -jar jobq.jar <role>}: the launcher. One subcommand per {@link Role}: {@code migrate} (apply
 * the schema and exit), {@code api} (HTTP server; migrates first), {@code worker} (runs jobs; refuses an
 * unmigrated schema) and {@code all} (migrate, API and an in-process worker: the quick start). Each
 * subcommand's flags are built from the {@link Settings} declarations that apply to its role.
 *
 * <p>Exit codes: 0 after a clean run or a graceful stop on SIGTERM/SIGINT; 2 for invalid configuration
 * or command line (one line naming the variable or flag); 1 for any other start-up failure; 3
 * ({@link FatalErrorPolicy#HALT_EXIT_CODE}) when a fatal VM error (OutOfMemoryError, InternalError,
 * UnknownError) reached jobq in any role: the process halts at once, for its supervisor to restart it.
 */
@Command(name = "jobq", mixinStandardHelpOptions = true, version = "jobq 0.1.0",
        description = "A multi-tenant background job queue on PostgreSQL.",
        footer = {"", "Every flag has an environment variable; flags win. See README.md, Configuration."})
public final class Main implements Runnable {

    /** Exit code for invalid configuration or usage. */
    static final int EXIT_USAGE = 2;
    /** Exit code for a start-up failure (database unreachable, schema not migrated, port in use…). */
    static final int EXIT_FAILURE = 1;

    public static void main(String[] args) {
        UncaughtErrors uncaught = UncaughtErrors.install();
        int code;
        try {
            code = run(args);
        } catch (Throwable e) {
            // picocli hands only Exceptions to the handler below; an Error escapes execute(). Exit even
            // then: a non-daemon thread (the HTTP server's) would otherwise keep a broken process alive.
            uncaught.uncaughtException(Thread.currentThread(), e);
            System.err.println("jobq: " + e);
            code = EXIT_FAILURE;
        }
        System.exit(code);
    }

    /** Runs the launcher in this JVM and returns its exit code (tests call this). */
    static int run(String... args) {
        CommandLine cl = commandLine();
        // picocli quotes a mistyped option with its value ("--admin-kye=<the key>"): the value may be a secret
        cl.setParameterExceptionHandler((ex, ignored) -> {
            PrintWriter err = ex.getCommandLine().getErr();
            err.println(withoutValues(ex.getMessage()));
            ex.getCommandLine().usage(err);
            return EXIT_USAGE;
        });
        cl.setExecutionExceptionHandler((e, commandLine, parseResult) -> {
            PrintWriter err = commandLine.getErr();
            if (e instanceof InvalidSettingsException) {
                err.println("jobq: " + e.getMessage());
                return EXIT_USAGE;
            }
            err.println("jobq: " + (e.getMessage() == null ? e.toString() : e.getMessage()));
            if (!(e instanceof LauncherException)) LoggerFactory.getLogger(Main.class).error("start-up failed", e);
            return EXIT_FAILURE;
        });
        return cl.execute(args);
    }

    /** {@code text} with every {@code --flag=value} written {@code --flag=<hidden>}. */
    static String withoutValues(String text) {
        return text == null ? "" : text.replaceAll("(--[A-Za-z0-9-]+)=[^'\\s,]*", "$1=<hidden>");
    }

    /** The command line: {@code jobq}, a subcommand per {@link Role} in declaration order, and {@code help}. */
    static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new Main());
        for (Role role : Role.values()) cl.addSubcommand(role.command(), new RoleCommand(role).commandLine());
        return cl.addSubcommand("help", new CommandLine.HelpCommand());
    }

    @Spec CommandSpec spec;

    /** {@code jobq} without a role: the usage, listing the roles. */
    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    /** One role's subcommand: an option per setting that applies to the role; running it starts the role. */
    private static final class RoleCommand implements Callable<Integer> {
        private final Role role;
        private final Map<Setting<?>, OptionSpec> options = new LinkedHashMap<>();

        RoleCommand(Role role) {
            this.role = role;
        }

        CommandLine commandLine() {
            CommandSpec spec = CommandSpec.wrapWithoutInspection(this).name(role.command()).mixinStandardHelpOptions(true);
            spec.usageMessage().description(role.description());
            for (Setting<?> setting : Settings.all()) {
                if (!setting.appliesTo(role)) continue;
                OptionSpec option = setting.option();
                spec.addOption(option);
                options.put(setting, option);
            }
            return new CommandLine(spec);
        }

        @Override
        public Integer call() throws InterruptedException {
            Map<Setting<?>, String> flags = new HashMap<>();
            options.forEach((setting, option) -> {
                String value = option.getValue();
                if (value != null) flags.put(setting, value);
            });
            return Roles.start(role, settings(flags));
        }
    }

    /** Resolves settings from the environment and the given flags, and applies the log level. */
    private static Settings settings(Map<Setting<?>, String> flags) {
        Settings s = Settings.resolve(System.getenv(), flags);
        if (LoggerFactory.getILoggerFactory() instanceof LoggerContext ctx) {
            ctx.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME).setLevel(Level.valueOf(s.get(Settings.LOG_LEVEL)));
        }
        for (String unknown : Settings.unknownVariables(System.getenv().keySet())) {
            LoggerFactory.getLogger(Main.class).warn("{} is not a jobq setting and is ignored (names: README.md, Configuration;"
                    + " handler settings start with JOBQ_HANDLER_)", unknown);
        }
        return s;
    }
}
