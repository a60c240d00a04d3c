package io.jobq.http;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.jobq.application.fake.Await;
import io.jobq.application.port.NewJob;
import io.jobq.application.worker.HandlerRegistry;
import io.jobq.application.worker.Worker;
import io.jobq.application.worker.WorkerSettings;
import io.jobq.domain.job.JobId;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.tenant.TenantId;
import io.jobq.postgres.PostgresWakeupChannel;
import io.jobq.postgres.testing.TestDatabase;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.LoggerFactory;

/**
 * The listener tests' set-up: an API over the test database and one idle worker on its store, woken
 * through a given {@link PostgresWakeupChannel}, whose listener state is in the API's {@code /metrics}
 * (through {@link WorkerMetrics}) and whose channel's log is captured. Close it when done.
 */
final class ListeningWorker implements AutoCloseable {
    /**
     * Short settings: lease 2 s (heartbeat lease/3), maintenance 0.5 s, fallback poll 30 s, so only the
     * wake-up path can start a job within 2 s.
     */
    static final WorkerSettings SHORT = WorkerSettings.builder()
            .lease(Duration.ofSeconds(2))
            .maintenanceInterval(Duration.ofMillis(500))
            .pollInterval(Duration.ofSeconds(30))
            .build();
    static final NewJob NOOP = NewJob.of(TenantId.of("t1"), QueueName.DEFAULT, TaskName.of("noop"), "{}");

    final ApiFixture api;
    final Worker worker;
    private final Logger channelLog = (Logger) LoggerFactory.getLogger(PostgresWakeupChannel.class);
    private final ListAppender<ILoggingEvent> logged = new ListAppender<>();

    private ListeningWorker(TestDatabase db, PostgresWakeupChannel channel, WorkerSettings settings) {
        logged.start();
        channelLog.addAppender(logged);
        api = ApiFixture.start(db);
        worker = Worker.builder(api.store(), HandlerRegistry.withBuiltIns()).wakeups(channel).settings(settings)
                .listener(WorkerMetrics.bind(api.registry(), Optional.of(channel))).build();
        worker.start();
    }

    /** Starts the API and the worker; the channel's log is captured from now on. */
    static ListeningWorker start(TestDatabase db, PostgresWakeupChannel channel, WorkerSettings settings) {
        return new ListeningWorker(db, channel, settings);
    }

    /** Enqueues a {@code noop} through the store. */
    JobId enqueueNoop() {
        return api.store().enqueue(NOOP).job().id();
    }

    /** The value of one un-labelled series in a scrape of {@code /metrics}. */
    double metric(String name) {
        String text = api.client().get("/metrics").text();
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + "(?:\\{[^}]*\\})? (\\S+)$").matcher(text);
        assertThat(m.find()).as(name + " in /metrics").isTrue();
        return Double.parseDouble(m.group(1));
    }

    /** Whether the channel logged, at {@code level}, a message containing every one of {@code fragments}. */
    boolean channelLogged(Level level, String... fragments) {
        List<ILoggingEvent> events;
        // The channel's thread appends while this reads: copy under the appender's lock (its doAppend holds it).
        synchronized (logged) {
            events = List.copyOf(logged.list);
        }
        return events.stream().anyMatch(e -> e.getLevel() == level
                && Arrays.stream(fragments).allMatch(e.getFormattedMessage()::contains));
    }

    /** Milliseconds from enqueue to done, by the database clock, once the job is done (else fails after 10 s). */
    long enqueueToDoneMillis(JobId id) {
        TestDatabase db = api.db();
        Await.until(Duration.ofSeconds(10), "job " + id + " done", () -> db.dsl()
                .resultQuery("SELECT state FROM jobs WHERE id = {0}", id.value()).fetchSingle(0, String.class).equals("done"));
        return db.dsl().resultQuery("SELECT extract(epoch FROM finished_at - created_at) * 1000 FROM jobs WHERE id = {0}",
                id.value()).fetchSingle(0, Double.class).longValue();
    }

    @Override
    public void close() {
        try {
            worker.close();
        } finally {
            api.close();
            channelLog.detachAppender(logged);
        }
    }
}
