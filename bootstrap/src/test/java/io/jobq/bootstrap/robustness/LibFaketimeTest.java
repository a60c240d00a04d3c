package io.jobq.bootstrap.robustness;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LibFaketimeTest {
    @TempDir
    Path root;

    private Path library(String... dirs) throws Exception {
        Path dir = root.resolve(Path.of("", dirs));
        Files.createDirectories(dir);
        return Files.writeString(dir.resolve(LibFaketime.FILE), "");
    }

    @Test
    void isFoundInAMultiarchDirectory() throws Exception {
        Path lib = library("usr-lib", "aarch64-linux-gnu", "faketime");
        assertThat(LibFaketime.find(Map.of(), "", List.of(root.resolve("other"), root.resolve("usr-lib")))).isEqualTo(lib);
    }

    @Test
    void isFoundDirectlyUnderARoot() throws Exception {
        Path lib = library("usr-local-lib", "faketime");
        assertThat(LibFaketime.find(Map.of(), "", List.of(root.resolve("usr-local-lib")))).isEqualTo(lib);
    }

    @Test
    void isFoundThroughTheDynamicLinkersCache() throws Exception {
        Path lib = library("opt", "ft");
        String ldconfig = "2 libs found in cache\n\t" + LibFaketime.FILE + " (libc6,x86-64) => " + lib + "\n";
        assertThat(LibFaketime.find(Map.of(), ldconfig, List.of())).isEqualTo(lib);
    }

    @Test
    void theEnvironmentOverridesTheSearchAndMustNameAFile() throws Exception {
        Path lib = library("custom");
        library("usr-lib", "faketime");
        assertThat(LibFaketime.find(Map.of(LibFaketime.ENV, lib.toString()), "", List.of(root.resolve("usr-lib"))))
                .isEqualTo(lib);
        assertThatThrownBy(() -> LibFaketime.find(Map.of(LibFaketime.ENV, "/nowhere/lib.so"), "", List.of()))
                .hasMessageContaining("FAKETIME_LIB=/nowhere/lib.so is not a file");
    }

    @Test
    void whenMissingTheFailureNamesEveryPlaceSearchedAndThePackage() {
        assertThatThrownBy(() -> LibFaketime.find(Map.of(), "", List.of(root.resolve("usr-lib"))))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("libfaketime (libfaketime.so.1) not found")
                .hasMessageContaining("FAKETIME_LIB (unset); ldconfig -p; " + root.resolve("usr-lib") + "/faketime, "
                        + root.resolve("usr-lib") + "/*/faketime")
                .hasMessageContaining("apt-get install faketime");
    }
}
