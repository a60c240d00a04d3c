package io.jobq.http;

import io.jobq.application.port.JobQueueException;
import io.jobq.application.port.JobStore;
import io.jobq.domain.job.JobState;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.NavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The dashboard's backlog over the last {@value #MINUTES} minutes: the store keeps no history of live counts,
 * so this server samples them ({@link JobStore#liveCountsByQueue}: exact, and cheap however many jobs finished)
 * every {@link #EVERY} once the dashboard has first been opened, and keeps the latest sample of each minute in
 * memory. Another server, or a restart, starts its own history.
 */
final class BacklogHistory implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(BacklogHistory.class);
    static final int MINUTES = 30;
    static final Duration EVERY = Duration.ofSeconds(10);

    /** Jobs waiting (queued and held) and running, over every queue, at the minute's latest sample. */
    record Sample(long waiting, long running) {}

    private final JobStore store;
    private final NavigableMap<Instant, Sample> byMinute = new ConcurrentSkipListMap<>();
    private ScheduledExecutorService sampler;

    BacklogHistory(JobStore store) {
        this.store = store;
    }

    /** Starts sampling, once: the first dashboard page calls it, so servers nobody looks at never sample. */
    synchronized void start() {
        if (sampler != null) return;
        sampler = Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().name("jobq-dashboard-sampler").daemon().factory());
        sampler.scheduleWithFixedDelay(this::sample, 0, EVERY.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** The samples of the last {@value #MINUTES} minutes by minute start; minutes without one are absent. */
    Map<Instant, Sample> lastMinutes(Instant now) {
        Instant from = now.truncatedTo(ChronoUnit.MINUTES).minus(Duration.ofMinutes(MINUTES));
        return byMinute.tailMap(from, true);
    }

    /** Takes one sample now (the sampler's task; also for tests). */
    void sample() {
        try {
            long waiting = 0;
            long running = 0;
            for (Map<JobState, Long> counts : store.liveCountsByQueue().values()) {
                waiting += counts.getOrDefault(JobState.QUEUED, 0L) + counts.getOrDefault(JobState.HELD, 0L);
                running += counts.getOrDefault(JobState.RUNNING, 0L);
            }
            Instant minute = Instant.now().truncatedTo(ChronoUnit.MINUTES);
            byMinute.put(minute, new Sample(waiting, running));
            byMinute.headMap(minute.minus(Duration.ofMinutes(MINUTES + 1))).clear();
        } catch (JobQueueException e) {
            // the chart shows a gap for this minute; the next sample tries again
            log.debug("dashboard: cannot sample the backlog: {}", e.getMessage());
        } catch (RuntimeException e) {
            log.warn("dashboard: backlog sample failed", e); // never let the scheduled task die
        }
    }

    @Override
    public synchronized void close() {
        if (sampler != null) sampler.shutdownNow();
    }
}
