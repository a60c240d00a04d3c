package io.jobq.postgres;

import java.sql.Connection;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.jooq.Configuration;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.conf.MappedSchema;
import org.jooq.conf.RenderMapping;
import org.jooq.conf.Settings;
import org.jooq.impl.DSL;

/**
 * The PostgreSQL schema that holds jobq's tables, functions and Flyway history (default {@code jobq}), so
 * jobq can live in an application's own database beside its {@code public.jobs} or {@code public.tenants}.
 * Every statement jobq runs names this schema; none depends on the connection's {@code search_path}, so
 * {@link JobClient} can enqueue on the application's connection without changing it.
 *
 * <p>How names are qualified, in one place: jOOQ's generated tables belong to the unnamed default schema
 * and {@link #settings()} maps that to this one; plain SQL is written with the literal prefix
 * {@code jobq.} before each of jobq's objects and {@link #sql(String)} rewrites it for another schema.
 *
 * @param name an unquoted lower-case PostgreSQL identifier: {@code [a-z_][a-z0-9_]*}, at most 63 bytes, not
 *     starting with {@code pg_} (reserved for the system), not a reserved word such as {@code user}.
 *     Quoting is never needed, so a name can go into SQL text as is.
 */
public record JobqSchema(String name) {
    private static final Pattern NAME = Pattern.compile("[a-z_][a-z0-9_]{0,62}");
    /** The prefix plain SQL uses before jobq's objects: its tables and its {@code jobq_*} functions. */
    private static final Pattern PREFIXED = Pattern.compile("\\bjobq\\.(?=(jobs|tenants|queues|measured_runs|workers|schedules|schedule_ticks|schedule_revisions|api_keys|quarantined_rows|upkeep_turn|jobq_\\w+)\\b)");
    /** The schema itself named in plain SQL, for catalog lookups that must not need USAGE on it. */
    private static final String NAMESPACE = "'jobq'::regnamespace";
    /** jOOQ configuration data key under which a context made here carries its schema. */
    private static final String DATA_KEY = JobqSchema.class.getName();

    /**
     * PostgreSQL's reserved words and type/function-name keywords ({@code pg_get_keywords()} categories R
     * and T): unquoted, none can name a schema in {@code <schema>.jobs}.
     */
    private static final Set<String> KEYWORDS = Set.of("all", "analyse", "analyze", "and", "any", "array", "as", "asc",
            "asymmetric", "authorization", "binary", "both", "case", "cast", "check", "collate", "collation", "column",
            "concurrently", "constraint", "create", "cross", "current_catalog", "current_date", "current_role",
            "current_schema", "current_time", "current_timestamp", "current_user", "default", "deferrable", "desc",
            "distinct", "do", "else", "end", "except", "false", "fetch", "for", "foreign", "freeze", "from", "full",
            "grant", "group", "having", "ilike", "in", "initially", "inner", "intersect", "into", "is", "isnull", "join",
            "lateral", "leading", "left", "like", "limit", "localtime", "localtimestamp", "natural", "not", "notnull",
            "null", "offset", "on", "only", "or", "order", "outer", "overlaps", "placing", "primary", "references",
            "returning", "right", "select", "session_user", "similar", "some", "symmetric", "system_user", "table",
            "tablesample", "then", "to", "trailing", "true", "union", "unique", "user", "using", "variadic", "verbose",
            "when", "where", "window", "with");

    /** Rewritten statements, by their text (statements are constants: the map stays as small as they are few). */
    private static final Map<String, Map<String, String>> REWRITTEN = new ConcurrentHashMap<>();

    /** The default: {@code jobq}. (Declared after the patterns its constructor needs.) */
    public static final JobqSchema DEFAULT = new JobqSchema("jobq");

    /** @throws IllegalArgumentException naming the schema setting when {@code name} is not a plain identifier */
    public JobqSchema {
        Objects.requireNonNull(name, "schema");
        if (!NAME.matcher(name).matches() || name.startsWith("pg_") || KEYWORDS.contains(name)) {
            throw new IllegalArgumentException("schema must be a lower-case PostgreSQL identifier ([a-z_][a-z0-9_]*, "
                    + "at most 63 characters, not starting with pg_, not a reserved word), was '" + printable(name) + "'");
        }
    }

    /** @throws IllegalArgumentException as the constructor */
    public static JobqSchema of(String name) {
        return new JobqSchema(name);
    }

    /**
     * {@code sql} with each {@code jobq.<object>} prefix, and {@code 'jobq'::regnamespace}, naming this schema instead. Statements written for
     * the default schema come back unchanged (the same instance) when this is the default.
     */
    public String sql(String sql) {
        if (name.equals(DEFAULT.name)) return sql;
        return REWRITTEN.computeIfAbsent(name, n -> new ConcurrentHashMap<>())
                .computeIfAbsent(sql, s -> PREFIXED.matcher(s).replaceAll(Matcher.quoteReplacement(name + "."))
                        .replace(NAMESPACE, "'" + name + "'::regnamespace"));
    }

    /** jOOQ settings that render every generated table as {@code <schema>.<table>}. */
    public Settings settings() {
        return new Settings()
                .withRenderMapping(new RenderMapping().withSchemata(new MappedSchema().withInput("").withOutput(name)))
                .withExecuteLogging(false);
    }

    /**
     * A jOOQ context on a pool, carrying this schema (see {@link #of(DSLContext)}); its transactions skip
     * jOOQ's isolation-level query ({@link PooledTransactions}).
     */
    public DSLContext dsl(DataSource dataSource) {
        DSLContext dsl = DSL.using(dataSource, SQLDialect.POSTGRES, settings());
        dsl.configuration().set(new PooledTransactions(dataSource));
        return carrying(dsl);
    }

    /** A jOOQ context on the caller's connection (and so in its transaction), carrying this schema. */
    public DSLContext dsl(Connection connection) {
        return carrying(DSL.using(connection, SQLDialect.POSTGRES, settings()));
    }

    private DSLContext carrying(DSLContext dsl) {
        dsl.configuration().data(DATA_KEY, this);
        return dsl;
    }

    /**
     * The schema a context made by {@link #dsl} carries, including contexts jOOQ derives from it for a
     * transaction ({@code transactionResult(cfg -> …)}).
     *
     * @throws IllegalStateException for a context not made here: a programming error, never user input
     */
    public static JobqSchema of(DSLContext dsl) {
        return of(dsl.configuration());
    }

    /** As {@link #of(DSLContext)}. */
    public static JobqSchema of(Configuration configuration) {
        if (configuration.data(DATA_KEY) instanceof JobqSchema schema) return schema;
        throw new IllegalStateException("this jOOQ context was not made by JobqSchema.dsl: it does not know jobq's schema");
    }

    private static String printable(String s) {
        String cut = s.length() > 80 ? s.substring(0, 80) + "…" : s;
        return cut.replaceAll("\\p{Cntrl}", "?");
    }
}
