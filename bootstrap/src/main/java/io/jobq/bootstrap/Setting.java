package io.jobq.bootstrap;

import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import picocli.CommandLine.Model.OptionSpec;

/**
 * One thing the launcher can be told, declared once in {@link Settings}; everything else about it is
 * derived here: its flag, its {@code --help} text, the roles that take it, and (by the test that
 * writes README's configuration table) its README row.
 *
 * @param env the environment variable, e.g. {@code JOBQ_LEASE}; the flag is derived from it ({@code --lease})
 * @param parts what a role must run (any one of them) for the setting to apply; empty: every role takes it
 * @param type how its text is read and written
 * @param defaultValue the value when neither the variable nor the flag is given; for an optional setting,
 *     empty, and {@code doc} says what "unset" means
 * @param doc what it means, one or more sentences; Markdown code spans ({@code `x`}) allowed
 */
record Setting<T>(String env, Set<Role.Part> parts, SettingType<T> type, T defaultValue, String doc) {
    private static final String ENV_PREFIX = "JOBQ_";

    Setting {
        Objects.requireNonNull(env, "env");
        parts = Set.copyOf(Objects.requireNonNull(parts, "parts"));
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(defaultValue, "defaultValue");
        Objects.requireNonNull(doc, "doc");
        if (!env.matches("[A-Z][A-Z0-9_]*")) throw new IllegalArgumentException("env must be UPPER_SNAKE_CASE, was " + env);
        if (doc.isBlank()) throw new IllegalArgumentException(env + " needs a doc");
    }

    /** {@code JOBQ_POOL_SIZE} → {@code --pool-size}, {@code DATABASE_URL} → {@code --database-url}. */
    String flag() {
        String name = env.startsWith(ENV_PREFIX) ? env.substring(ENV_PREFIX.length()) : env;
        return "--" + name.toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /** Whether {@code role}'s command line takes this setting's flag. */
    boolean appliesTo(Role role) {
        return parts.isEmpty() || parts.stream().anyMatch(role::runs);
    }

    /** The default as text, e.g. {@code 30s}; empty for an optional setting. */
    String defaultText() {
        return type.print(defaultValue);
    }

    /** {@code doc} without Markdown: what {@code --help} shows. */
    String plainDoc() {
        return doc.replace("`", "");
    }

    /**
     * The picocli option for this setting: its flag, taking one String (parsed later by {@link Settings},
     * which names the flag in errors), described as "Env JOBQ_LEASE. How long … Default: 30s.".
     */
    OptionSpec option() {
        String defaultText = defaultText();
        String description = "Env " + env + ". " + plainDoc() + (defaultText.isEmpty() ? "" : " Default: " + defaultText + ".");
        // picocli formats descriptions with String.format: a literal % must be doubled.
        return OptionSpec.builder(flag())
                .paramLabel(type.label())
                .type(String.class)
                .description(description.replace("%", "%%"))
                .build();
    }
}
