package io.jobq.application.port;

import io.jobq.domain.fairness.Fairness;
import io.jobq.domain.job.QueueName;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * A change to a queue's settings ({@link JobStore#configureQueue}); what is empty stays as it is (a queue
 * never configured has {@link Fairness#JOBS} and {@link Retention#DEFAULT}).
 *
 * @param keepDone how long done jobs are kept ({@link Duration#ZERO}: for ever), checked as {@link Retention} does
 */
public record QueueUpdate(QueueName queue, Optional<Fairness> fairness, Optional<Duration> keepDone,
        Optional<Duration> keepDead, Optional<Duration> keepCancelled) {
    public QueueUpdate {
        Objects.requireNonNull(queue, "queue");
        Objects.requireNonNull(fairness, "fairness");
        Objects.requireNonNull(keepDone, "keepDone");
        Objects.requireNonNull(keepDead, "keepDead");
        Objects.requireNonNull(keepCancelled, "keepCancelled");
        // checked now, so a bad value never reaches a store
        new Retention(keepDone.orElse(Duration.ZERO), keepDead.orElse(Duration.ZERO), keepCancelled.orElse(Duration.ZERO));
    }

    /** Only the fairness. */
    public static QueueUpdate fairness(QueueName queue, Fairness fairness) {
        return new QueueUpdate(queue, Optional.of(fairness), Optional.empty(), Optional.empty(), Optional.empty());
    }

    /** Only the retention, all three states. */
    public static QueueUpdate retention(QueueName queue, Retention r) {
        return new QueueUpdate(queue, Optional.empty(), Optional.of(r.done()), Optional.of(r.dead()), Optional.of(r.cancelled()));
    }

    /** {@code current} with this update applied. */
    public QueueSettings applyTo(QueueSettings current) {
        Retention r = current.retention();
        return new QueueSettings(queue, fairness.orElse(current.fairness()),
                new Retention(keepDone.orElse(r.done()), keepDead.orElse(r.dead()), keepCancelled.orElse(r.cancelled())));
    }
}
