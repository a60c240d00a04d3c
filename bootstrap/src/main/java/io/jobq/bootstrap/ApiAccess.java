package io.jobq.bootstrap;

import static io.jobq.bootstrap.Settings.ADMIN_KEY;
import static io.jobq.bootstrap.Settings.ADMIN_KEY_FILE;
import static io.jobq.bootstrap.Settings.METRICS_KEY;

import io.jobq.http.AccessKeys;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/** The API's keys from the settings: {@code JOBQ_ADMIN_KEY} or the file {@code JOBQ_ADMIN_KEY_FILE} names, and {@code JOBQ_METRICS_KEY}. */
final class ApiAccess {
    private ApiAccess() {}

    /** @throws LauncherException (never quoting a key) if both admin settings are given, the file cannot be read or a key is refused */
    static AccessKeys keys(Settings settings) {
        Optional<String> admin = settings.get(ADMIN_KEY);
        Optional<Path> file = settings.get(ADMIN_KEY_FILE);
        if (admin.isPresent() && file.isPresent()) {
            throw new LauncherException(ADMIN_KEY.env() + " and " + ADMIN_KEY_FILE.env() + " are both set: give one");
        }
        if (file.isPresent()) admin = Optional.of(read(file.get()));
        try {
            return AccessKeys.of(admin, settings.get(METRICS_KEY));
        } catch (IllegalArgumentException e) {
            throw new LauncherException("invalid API key settings: " + e.getMessage());
        }
    }

    private static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8).strip();
        } catch (IOException e) {
            throw new LauncherException(ADMIN_KEY_FILE.env() + ": cannot read " + file + " (" + e.getClass().getSimpleName() + ")");
        }
    }
}
