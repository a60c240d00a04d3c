package io.jobq.bootstrap.robustness;

import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.postgres.testing.TestDatabase;
import io.jobq.postgres.testing.ThrowawayPostgres;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Found by the chaos soak: a worker started while PostgreSQL restarted exited 1 ("cannot read the schema
 * version"). A worker and an API started while the database is down now wait for it (DatabaseAtStart) and come
 * up when it is back. The server stopped is a {@link ThrowawayPostgres} of this class's own.
 */
class ProcessesWaitForTheDatabaseAtStartIT {
    private static ThrowawayPostgres postgres;

    @BeforeAll
    static void ownCluster() {
        postgres = ThrowawayPostgres.start(
                Path.of(System.getProperty("jobq.logs", "target/it-logs"), "ProcessesWaitForTheDatabaseAtStartIT", "postgres"));
    }

    @AfterAll
    static void removeCluster() {
        if (postgres != null) postgres.close();
    }

    @Test
    void aWorkerAndAnApiStartedWhileTheDatabaseIsDownComeUpWhenItIsBack() throws Exception {
        TestDatabase db = postgres.database();
        int port = JobqProcess.freePort();
        postgres.stopServer();
        boolean down = true;
        try (JobqProcess worker = ShortSettings.workerBuilder(getClass(), db, "waits", "waits", "10s").start();
             JobqProcess api = JobqProcess.builder(getClass(), "api", db.jdbcUrl()).args("api", "--port", Integer.toString(port)).start()) {
            worker.awaitLine(ShortSettings.START_UP, "cannot be reached at start");
            api.awaitLine(ShortSettings.START_UP, "cannot be reached at start");
            Thread.sleep(2_000);
            assertThat(worker.isAlive()).as("the worker waits rather than exiting").isTrue();
            assertThat(api.isAlive()).isTrue();

            postgres.startServer();
            down = false;

            worker.awaitLine(ShortSettings.START_UP, "worker waits started");
            new Http(port).awaitHealthy(api, ShortSettings.START_UP);
        } finally {
            if (down) postgres.startServer();
        }
    }

    @Test
    void sigtermWhileWaitingStopsTheProcessAtOnceWithExitZero() throws Exception {
        TestDatabase db = postgres.database();
        postgres.stopServer();
        try (JobqProcess worker = ShortSettings.workerBuilder(getClass(), db, "stopped", "stopped", "10s").start()) {
            worker.awaitLine(ShortSettings.START_UP, "cannot be reached at start");
            long sent = System.nanoTime();
            worker.signal("TERM");
            assertThat(worker.awaitExit(Duration.ofSeconds(10))).isZero();
            assertThat(Duration.ofNanos(System.nanoTime() - sent)).as("not the rest of the 60 s wait").isLessThan(Duration.ofSeconds(5));
            assertThat(worker.output()).contains("stopped while waiting for the database");
        } finally {
            postgres.startServer();
        }
    }
}
