package io.jobq.postgres.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The cluster R10 restarts: its own, migrated, restartable, and gone without a trace when closed. */
class ThrowawayPostgresTest {

    @Test
    void aMigratedClusterOfItsOwnSurvivesARestartAndLeavesNothingRunningOrOnDiskWhenClosed(@TempDir Path logs)
            throws Exception {
        ThrowawayPostgres pg = ThrowawayPostgres.start(logs);
        TestDatabase db;
        int port;
        Path dataDir;
        try {
            db = pg.database();
            port = Integer.parseInt(db.jdbcUrl().replaceAll(".*127\\.0\\.0\\.1:(\\d+)/.*", "$1"));
            assertThat(port).isNotEqualTo(5432);
            assertThat(query(db, "SELECT count(*) FROM jobs")).isEqualTo("0"); // migrated
            dataDir = Path.of(query(db, "SHOW data_directory"));
            String startedBefore = query(db, "SELECT pg_postmaster_start_time()");

            pg.restart();

            assertThat(query(db, "SELECT pg_postmaster_start_time()")).isNotEqualTo(startedBefore);
        } finally {
            pg.close();
        }
        assertThat(Files.exists(dataDir.getParent())).as("the cluster's directory is deleted").isFalse();
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 1000);
            throw new AssertionError("something still listens on port " + port);
        } catch (java.net.ConnectException expected) {
            // nothing listens any more
        }
        assertThat(Files.readString(logs.resolve("postgres.log"))).contains("database system is shut down");
    }

    private static String query(TestDatabase db, String sql) throws Exception {
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }
}
