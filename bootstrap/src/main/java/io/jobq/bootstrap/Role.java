package io.jobq.bootstrap;

import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;

/**
 * What one {@code jobq} process runs, named by its subcommand ({@code jobq worker}). Every role connects
 * to the database and logs; beyond that each runs the {@link Part}s listed here, and takes the flags
 * of the {@link Setting}s of those parts (plus the ones every role takes).
 */
enum Role {
    MIGRATE("Apply the schema migrations and exit."),
    API("Run the HTTP API (migrates the schema first).", Part.HTTP_API),
    WORKER("Run jobs. Refuses to start on an unmigrated schema; drains in-hand jobs on SIGTERM.", Part.WORKER),
    ALL("Migrate, then run the HTTP API and a worker in one process: the quick start.", Part.HTTP_API, Part.WORKER);

    /** A long-running component a role may start. */
    enum Part {
        /** The HTTP API (and its GET /metrics). */
        HTTP_API,
        /** A worker claiming and running jobs. */
        WORKER
    }

    private final String description;
    private final Set<Part> parts;

    Role(String description, Part... parts) {
        this.description = description;
        this.parts = parts.length == 0 ? EnumSet.noneOf(Part.class) : EnumSet.of(parts[0], parts);
    }

    /** The subcommand: {@code migrate}, {@code api}, {@code worker}, {@code all}. */
    String command() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** One line for {@code --help}. */
    String description() {
        return description;
    }

    /** Whether this role starts {@code part}. */
    boolean runs(Part part) {
        return parts.contains(part);
    }
}
