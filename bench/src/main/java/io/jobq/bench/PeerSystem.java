package io.jobq.bench;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/**
 * A job system the peer comparison drains the same no-op jobs with: jobq itself ({@link JobqPeer}),
 * db-scheduler ({@link DbSchedulerPeer}) and JobRunr ({@link JobRunrPeer}). Each runs on its own
 * fresh database on the same server, one worker process (this JVM) with {@code concurrency} slots.
 */
interface PeerSystem {
    /** The name and version the report prints, e.g. "db-scheduler 16.7.1". */
    String name();

    /** The settings it runs with at this concurrency, printed in the report. */
    String settings(int concurrency);

    /**
     * Enqueues {@code jobs} no-op jobs (not timed), then drains them with {@code concurrency} slots,
     * timed from the first job picked up to the last outcome committed ({@link Drain#timed}).
     *
     * @throws BenchException if a job is not done afterwards or the drain takes over its timeout
     */
    Drain drain(int jobs, int concurrency);

    /** A peer's version as bench/pom.xml pins it, or "?" if the build did not fill it in. */
    static String version(String artifact) {
        Properties p = new Properties();
        try (InputStream in = PeerSystem.class.getResourceAsStream("peers.properties")) {
            if (in != null) p.load(in);
        } catch (IOException e) {
            // the name alone will do
        }
        return p.getProperty(artifact, "?");
    }
}
