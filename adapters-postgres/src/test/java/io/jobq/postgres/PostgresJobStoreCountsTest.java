package io.jobq.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.domain.job.JobState;
import io.jobq.domain.job.QueueName;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * countsByQueueAndState: exact live counts always; exact done/dead on a small table, a block-sample
 * estimate on a large one (so /stats and /metrics stay cheap with millions of finished jobs).
 */
class PostgresJobStoreCountsTest extends PostgresStoreTestCase {

    @BeforeEach
    void twoTenantRows() {
        db.execute("INSERT INTO tenants (queue, tenant) VALUES ('default', 'acme'), ('mail', 'acme')");
    }

    void insert(String queue, String state, int n) {
        db.execute("""
                INSERT INTO jobs (queue, tenant, task, payload, state, vtime, attempts, finished_at)
                SELECT ?, 'acme', 'noop', jsonb_build_object('i', g), ?, g, 1, CASE WHEN ? IN ('done', 'dead') THEN now() END
                FROM generate_series(1, ?) g""", queue, state, state, n);
    }

    long pages() {
        return db.dsl().resultQuery("SELECT pg_relation_size('jobs') / current_setting('block_size')::bigint").fetchSingle(0, Long.class);
    }

    @Test
    void aSmallTableIsCountedExactly() {
        insert("default", "done", 1234);
        insert("default", "dead", 7);
        insert("mail", "queued", 3);
        assertThat(pages()).isLessThanOrEqualTo(JobCounts.EXACT_TERMINAL_MAX_PAGES);
        Map<QueueName, Map<JobState, Long>> counts = store.countsByQueueAndState();
        assertThat(counts.get(QueueName.DEFAULT)).containsExactlyInAnyOrderEntriesOf(Map.of(JobState.DONE, 1234L, JobState.DEAD, 7L));
        assertThat(counts.get(QueueName.of("mail"))).containsExactlyInAnyOrderEntriesOf(Map.of(JobState.QUEUED, 3L));
    }

    @Test
    void aLargeTableEstimatesDoneAndDeadButCountsLiveJobsExactly() {
        insert("default", "done", 200_000);
        insert("mail", "dead", 50_000);
        insert("default", "queued", 17);
        insert("mail", "scheduled", 5);
        assertThat(pages()).isGreaterThan(JobCounts.EXACT_TERMINAL_MAX_PAGES);
        Map<QueueName, Map<JobState, Long>> counts = store.countsByQueueAndState();
        assertThat(counts.get(QueueName.DEFAULT).get(JobState.QUEUED)).isEqualTo(17);
        assertThat(counts.get(QueueName.of("mail")).get(JobState.SCHEDULED)).isEqualTo(5);
        // a ~500-page sample: within 15% (the rows of each queue are contiguous, the worst case for block sampling)
        assertThat(counts.get(QueueName.DEFAULT).get(JobState.DONE)).isBetween(170_000L, 230_000L);
        assertThat(counts.get(QueueName.of("mail")).get(JobState.DEAD)).isBetween(42_500L, 57_500L);
        // the same pages on every call, so a dashboard does not jitter
        assertThat(store.countsByQueueAndState()).isEqualTo(counts);
    }
}
