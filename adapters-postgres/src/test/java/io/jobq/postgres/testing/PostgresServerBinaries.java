package io.jobq.postgres.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Finds the directory of PostgreSQL's server programs ({@code initdb}, {@code pg_ctl}, {@code postgres}),
 * which {@link ThrowawayPostgres} runs. Client-only installs lack them (Debian puts them in the
 * {@code postgresql-<version>} package, under {@code /usr/lib/postgresql/<version>/bin}, not on PATH).
 * Searched in this order, the first directory holding both {@code initdb} and {@code pg_ctl} winning:
 * {@code pg_config --bindir}; {@code <versions root>/<version>/bin}, newest version first, for
 * {@code /usr/lib/postgresql} (Debian, Ubuntu) and {@code /usr/pgsql-<version>/bin} (PGDG RPMs);
 * {@code /usr/local/pgsql/bin} (a source build); then every directory on PATH.
 */
public final class PostgresServerBinaries {
    private PostgresServerBinaries() {}

    /**
     * The directory on this machine.
     *
     * @throws IllegalStateException naming every place searched, and what to install, if none has them
     */
    public static Path directory() {
        List<Path> candidates = new ArrayList<>();
        pgConfigBindir().ifPresent(candidates::add);
        candidates.addAll(versioned(Path.of("/usr/lib/postgresql"), "", "bin"));
        candidates.addAll(versioned(Path.of("/usr"), "pgsql-", "bin"));
        candidates.add(Path.of("/usr/local/pgsql/bin"));
        for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
            if (!dir.isBlank()) candidates.add(Path.of(dir));
        }
        return firstWithServerPrograms(candidates).orElseThrow(() -> new IllegalStateException(
                "PostgreSQL's server programs (initdb, pg_ctl) were not found; R10 starts a throwaway PostgreSQL"
                        + " cluster of its own with them. Searched: " + candidates + ". Install them (Debian/Ubuntu:"
                        + " apt-get install postgresql; Fedora: dnf install postgresql-server; macOS: brew install"
                        + " postgresql) or put their directory on PATH."));
    }

    /** The first of {@code candidates} that holds executable {@code initdb} and {@code pg_ctl}. */
    static Optional<Path> firstWithServerPrograms(List<Path> candidates) {
        return candidates.stream()
                .filter(d -> Files.isExecutable(d.resolve("initdb")) && Files.isExecutable(d.resolve("pg_ctl")))
                .findFirst();
    }

    /**
     * {@code <root>/<prefix><version>/<bin>} for every version directory under {@code root}, newest
     * first by numeric version ({@code 16} before {@code 15} before {@code 9.6}).
     */
    static List<Path> versioned(Path root, String prefix, String bin) {
        if (!Files.isDirectory(root)) return List.of();
        try (Stream<Path> children = Files.list(root)) {
            return children.filter(d -> d.getFileName().toString().startsWith(prefix))
                    .filter(d -> version(d.getFileName().toString().substring(prefix.length())) != null)
                    .sorted(Comparator.comparing((Path d) -> version(d.getFileName().toString().substring(prefix.length())),
                            PostgresServerBinaries::compareVersions).reversed())
                    .map(d -> d.resolve(bin))
                    .toList();
        } catch (IOException e) {
            return List.of();
        }
    }

    private static int[] version(String text) {
        if (!text.matches("\\d+(\\.\\d+)*")) return null;
        String[] parts = text.split("\\.");
        int[] v = new int[parts.length];
        for (int i = 0; i < parts.length; i++) v[i] = Integer.parseInt(parts[i]);
        return v;
    }

    private static int compareVersions(int[] a, int[] b) {
        return java.util.Arrays.compare(a, b);
    }

    private static Optional<Path> pgConfigBindir() {
        try {
            Process p = new ProcessBuilder("pg_config", "--bindir").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0 || out.isEmpty()) return Optional.empty();
            return Optional.of(Path.of(out));
        } catch (IOException e) {
            return Optional.empty(); // no pg_config: the other places are still searched
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }
}
