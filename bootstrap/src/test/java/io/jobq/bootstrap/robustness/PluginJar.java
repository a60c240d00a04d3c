package io.jobq.bootstrap.robustness;

import io.jobq.application.worker.JobHandlerProvider;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;

/**
 * Packs a {@link JobHandlerProvider} from the test classes into a plug-in jar, as docs/api.md ("Handlers:
 * what a run sees") tells users to: its class files (nested ones too) and the ServiceLoader entry naming it.
 */
final class PluginJar {
    private PluginJar() {}

    /** Writes {@code jar} holding {@code provider}; returns {@code jar}. */
    static Path of(Path jar, Class<? extends JobHandlerProvider> provider) {
        try {
            Path classes = Path.of(provider.getProtectionDomain().getCodeSource().getLocation().toURI());
            String packageDir = provider.getPackageName().replace('.', '/');
            List<Path> classFiles;
            try (Stream<Path> files = Files.list(classes.resolve(packageDir))) {
                String name = provider.getSimpleName();
                classFiles = files.filter(f -> f.getFileName().toString().equals(name + ".class")
                        || f.getFileName().toString().startsWith(name + "$")).toList();
            }
            Files.createDirectories(jar.getParent());
            try (OutputStream out = Files.newOutputStream(jar); JarOutputStream jarOut = new JarOutputStream(out)) {
                for (Path f : classFiles) {
                    jarOut.putNextEntry(new JarEntry(packageDir + "/" + f.getFileName()));
                    jarOut.write(Files.readAllBytes(f));
                    jarOut.closeEntry();
                }
                jarOut.putNextEntry(new JarEntry("META-INF/services/" + JobHandlerProvider.class.getName()));
                jarOut.write((provider.getName() + "\n").getBytes(StandardCharsets.UTF_8));
                jarOut.closeEntry();
            }
            return jar;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}
