package io.jobq.postgres;

import static io.jobq.postgres.StoreFixtures.W1;
import static io.jobq.postgres.StoreFixtures.claim;
import static io.jobq.postgres.StoreFixtures.job;
import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.application.port.RetryResult;
import io.jobq.domain.fairness.TenantWeight;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.JobId;
import io.jobq.domain.retry.RetryDecision;
import io.jobq.domain.tenant.TenantId;
import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import java.time.Duration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@link FairTags}' formula in numbers, on each of its three statements: a tenant with last tag L and a
 * weight, in a queue whose lowest queued tag is V, gets {@code max(V, L) + 1/weight} whether its job is
 * enqueued, promoted from scheduled, or retried from dead, and that tag becomes its new L.
 */
@ExtendWith(PostgresDatabaseExtension.class)
class FairTagsTest {
    static final TenantId T = TenantId.of("t");

    /** How the tenant's job becomes runnable. */
    enum Path { ENQUEUE, PROMOTE, RETRY_DEAD }

    TestDatabase db;
    PostgresJobStore store;

    @BeforeEach
    void setUp(TestDatabase db) {
        this.db = db;
        store = new PostgresJobStore(db.dataSource());
    }

    @ParameterizedTest(name = "V {0}, L {1}, weight {2} -> {3}")
    @CsvSource(textBlock = """
            # V,      L,     weight,  start tag = max(V, L) + 1/weight
            # a new tenant's first job
            0,        0,     1,       1
            # the flood's own next job: L dominates (its backlog is ahead of V)
            1,        7,     1,       8
            # a late tenant: V dominates, it starts one step behind the head
            51,       0,     1,       52
            # an idle tenant returning: its old L is far behind V, so it banks nothing
            500,      3,     1,       501
            # V == L
            5,        5,     1,       6
            # weights scale the step, not the starting point
            5,        5,     2,       5.5
            100,      0,     4,       100.25
            0,        0,     0.5,     2
            10,       0,     0.001,   1010
            1e10,     0,     1000,    10000000000.001
            """)
    void theStartTagIsMaxOfVirtualTimeAndLastTagPlusOneOverWeight(double v, double l, double weight, double expected) {
        for (Path path : Path.values()) {
            assertThat(startTag(path, v, l, weight)).as("%s: start tag", path).isEqualTo(expected);
            assertThat(db.dsl().resultQuery("SELECT last_vtime FROM tenants WHERE tenant = {0}", T.value())
                    .fetchSingle(0, Double.class)).as("%s: the tenant's new last tag", path).isEqualTo(expected);
        }
    }

    /** In an emptied queue: t's job made ready to become runnable by {@code path}, V and L set, then the step. */
    double startTag(Path path, double v, double l, double weight) {
        db.emptyTables();
        JobId subject = switch (path) {
            case ENQUEUE -> null;
            case PROMOTE -> store.enqueue(job("t").withDelay(Duration.ofHours(1))).job().id();
            case RETRY_DEAD -> {
                store.enqueue(job("t"));
                Job run = store.claim(claim(W1, 1)).getFirst();
                store.fail(run.fencingToken(), "boom", new RetryDecision.Dead(RetryDecision.Cause.PERMANENT_FAILURE));
                yield run.id();
            }
        };
        // V: the lowest queued tag, another tenant's head job
        store.enqueue(job("head"));
        db.execute("UPDATE jobs SET vtime = {0} WHERE tenant = 'head'", v);
        store.setWeight(T, StoreFixtures.Q, TenantWeight.of(weight));
        db.execute("UPDATE tenants SET last_vtime = {0} WHERE tenant = {1}", l, T.value());
        return switch (path) {
            case ENQUEUE -> store.enqueue(job("t")).job().vtime().orElseThrow();
            case PROMOTE -> {
                db.execute("UPDATE jobs SET run_at = now() - interval '1 second' WHERE id = {0}", subject.value());
                assertThat(store.promoteDue(10)).isEqualTo(1);
                yield store.get(subject).orElseThrow().vtime().orElseThrow();
            }
            case RETRY_DEAD -> ((RetryResult.Requeued) store.retryDead(subject)).job().vtime().orElseThrow();
        };
    }
}
