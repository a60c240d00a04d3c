package io.jobq.postgres.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PostgresServerBinariesTest {
    @TempDir
    Path root;

    private Path serverBin(String version, String... programs) throws Exception {
        Path bin = Files.createDirectories(root.resolve(version).resolve("bin"));
        for (String p : programs) {
            Files.createFile(bin.resolve(p), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
        }
        return bin;
    }

    @Test
    void versionDirectoriesComeNewestFirstByNumberNotByText() throws Exception {
        for (String v : List.of("9.6", "15", "16", "10")) serverBin(v, "initdb", "pg_ctl");
        Files.createDirectories(root.resolve("common"));

        assertThat(PostgresServerBinaries.versioned(root, "", "bin")).containsExactly(
                root.resolve("16/bin"), root.resolve("15/bin"), root.resolve("10/bin"), root.resolve("9.6/bin"));
    }

    @Test
    void theFirstDirectoryWithBothServerProgramsWins() throws Exception {
        Path clientOnly = serverBin("17", "psql", "pg_ctl");
        Path server = serverBin("16", "initdb", "pg_ctl", "postgres");

        assertThat(PostgresServerBinaries.firstWithServerPrograms(List.of(root.resolve("missing"), clientOnly, server)))
                .hasValue(server);
        assertThat(PostgresServerBinaries.firstWithServerPrograms(List.of(clientOnly))).isEmpty();
    }

    @Test
    void thisMachineHasThem() {
        assertThat(PostgresServerBinaries.directory().resolve("initdb")).isExecutable();
    }
}
