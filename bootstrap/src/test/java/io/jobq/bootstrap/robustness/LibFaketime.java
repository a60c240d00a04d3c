package io.jobq.bootstrap.robustness;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Finds libfaketime's preload library ({@code libfaketime.so.1}), which R11 puts in {@code LD_PRELOAD}
 * to skew a jobq JVM's wall clock. Its directory differs by distribution and architecture (Debian:
 * {@code /usr/lib/<multiarch>/faketime/}, others {@code /usr/lib64/faketime/}, a source build
 * {@code /usr/local/lib/faketime/}), so it is searched for, in this order:
 * <ol>
 *   <li>{@code FAKETIME_LIB}, if set: that file, or a failure saying it is missing;
 *   <li>{@code ldconfig -p} (a library registered with the dynamic linker);
 *   <li>{@code <root>/faketime/} and {@code <root>/<any>/faketime/} for each root in {@link #ROOTS}.
 * </ol>
 */
final class LibFaketime {
    static final String FILE = "libfaketime.so.1";
    static final String ENV = "FAKETIME_LIB";
    static final List<Path> ROOTS = List.of(Path.of("/usr/lib"), Path.of("/usr/lib64"), Path.of("/lib"),
            Path.of("/usr/local/lib"));

    private static volatile Path found;

    private LibFaketime() {}

    /**
     * The library on this machine (searched once per JVM).
     *
     * @throws IllegalStateException naming every place searched, and how to install it, if it is nowhere
     */
    static Path path() {
        Path p = found;
        if (p == null) {
            p = find(System.getenv(), ldconfigListing(), ROOTS);
            found = p;
        }
        return p;
    }

    /** The search itself, with the environment, {@code ldconfig -p}'s output and the roots given (for tests). */
    static Path find(Map<String, String> env, String ldconfig, List<Path> roots) {
        String override = env.get(ENV);
        if (override != null && !override.isBlank()) {
            Path p = Path.of(override);
            if (Files.isRegularFile(p)) return p;
            throw new IllegalStateException(ENV + "=" + override + " is not a file; point it at " + FILE
                    + " or unset it to search the usual places");
        }
        Optional<Path> linked = ldconfig.lines().filter(l -> l.strip().startsWith(FILE + " ") && l.contains("=>"))
                .map(l -> Path.of(l.substring(l.indexOf("=>") + 2).strip())).filter(Files::isRegularFile).findFirst();
        if (linked.isPresent()) return linked.get();
        List<String> searched = new ArrayList<>(List.of(ENV + " (unset)", "ldconfig -p"));
        for (Path root : roots) {
            searched.add(root + "/faketime, " + root + "/*/faketime");
            List<Path> dirs = new ArrayList<>(List.of(root));
            try (Stream<Path> children = Files.isDirectory(root) ? Files.list(root) : Stream.empty()) {
                children.filter(Files::isDirectory).sorted().forEach(dirs::add);
            } catch (IOException e) {
                // unreadable: nothing found there
            }
            for (Path dir : dirs) {
                Path candidate = dir.resolve("faketime").resolve(FILE);
                if (Files.isRegularFile(candidate)) return candidate;
            }
        }
        throw new IllegalStateException("libfaketime (" + FILE + ") not found; R11 runs jobq under it to skew its clock."
                + " Searched: " + String.join("; ", searched) + ". Install it (Debian/Ubuntu: apt-get install faketime;"
                + " Fedora: dnf install libfaketime) or set " + ENV + " to the library's path.");
    }

    private static String ldconfigListing() {
        try {
            Process p = new ProcessBuilder("ldconfig", "-p").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            return p.waitFor(10, TimeUnit.SECONDS) ? out : "";
        } catch (IOException e) {
            return ""; // no ldconfig on PATH: the directories are still searched
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "";
        }
    }
}
