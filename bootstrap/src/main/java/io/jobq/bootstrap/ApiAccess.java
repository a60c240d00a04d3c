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

    /**
     * @throws Settings.InvalidSettingsException (exit 2, never quoting a key) if both admin settings are given or a
     *     key is refused, naming the variable
     * @throws LauncherException if the key file cannot be read
     */
    static AccessKeys keys(Settings settings) {
        Optional<String> admin = settings.get(ADMIN_KEY);
        Optional<Path> file = settings.get(ADMIN_KEY_FILE);
        if (admin.isPresent() && file.isPresent()) {
            throw new Settings.InvalidSettingsException(ADMIN_KEY.env() + " and " + ADMIN_KEY_FILE.env() + " are both set: give one");
        }
        if (file.isPresent()) admin = Optional.of(read(file.get()));
        String adminSetting = file.isPresent() ? ADMIN_KEY_FILE.env() : ADMIN_KEY.env();
        Optional<String> adminKey = admin;
        checked(adminSetting, () -> AccessKeys.of(adminKey, Optional.empty()));
        return checked(METRICS_KEY.env(), () -> AccessKeys.of(adminKey, settings.get(METRICS_KEY)));
    }

    private static AccessKeys checked(String setting, java.util.function.Supplier<AccessKeys> keys) {
        try {
            return keys.get();
        } catch (IllegalArgumentException e) {
            throw new Settings.InvalidSettingsException("invalid " + setting + "=<hidden>: " + e.getMessage());
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
