package io.jobq.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.jobq.application.port.ClaimRequest;
import io.jobq.application.port.NewJob;
import io.jobq.domain.job.Job;
import io.jobq.domain.job.QueueName;
import io.jobq.domain.job.TaskName;
import io.jobq.domain.lease.WorkerId;
import io.jobq.domain.tenant.TenantId;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.jooq.exception.DataAccessException;
import org.junit.jupiter.api.Test;

/**
 * The wrong variant of priorities, run through PriorityContract's scenario: urgent jobs simply tagged at
 * their tenant's head (no jobs moved back) give the tenant turns that belong to others, which the
 * contract's comparison with a control catches. And the schema's range rule for hand-written rows.
 */
class TenantPriorityTest extends PostgresStoreTestCase {
    private static final TenantId A = TenantId.of("a");
    private static final TenantId B = TenantId.of("b");
    private static final QueueName CONTROL = QueueName.of("control");
    private static final TaskName TASK = TaskName.of("noop");

    private void enqueue(TenantId tenant, QueueName queue, int n) {
        for (int i = 0; i < n; i++) store.enqueue(NewJob.of(tenant, queue, TASK, "{}"));
    }

    private List<String> drainTenants(QueueName queue) {
        List<String> order = new ArrayList<>();
        while (true) {
            List<Job> got = store.claim(new ClaimRequest(List.of(queue), WorkerId.of("w"), 1, Duration.ofSeconds(30)));
            if (got.isEmpty()) return order;
            order.add(got.getFirst().tenant().value());
            store.complete(got.getFirst().fencingToken(), Optional.empty());
        }
    }

    @Test
    void urgentJobsTaggedAtTheirTenantsHeadTakeOtherTenantsTurns() {
        for (QueueName queue : List.of(QueueName.DEFAULT, CONTROL)) {
            enqueue(B, queue, 6);
            enqueue(A, queue, 6);
            enqueue(A, queue, 3);
        }
        // the wrong variant: a's three newest jobs in DEFAULT get a's head tag, nothing else moves
        db.execute("""
                UPDATE jobs SET vtime = (SELECT min(vtime) FROM jobs WHERE queue = 'default' AND tenant = 'a'), priority = 5
                WHERE id IN (SELECT id FROM jobs WHERE queue = 'default' AND tenant = 'a' ORDER BY id DESC LIMIT 3)""");
        List<String> wrong = drainTenants(QueueName.DEFAULT);
        List<String> control = drainTenants(CONTROL);
        assertThat(wrong).as("same jobs, other turns").isNotEqualTo(control);
        assertThat(wrong.subList(0, 8).stream().filter("a"::equals).count()).as("a's share of the first 8 turns")
                .isGreaterThan(control.subList(0, 8).stream().filter("a"::equals).count());
    }

    @Test
    void beyondTheLimitTheUrgentJobStillLeadsAndTheTenantsTagsAreUnchanged() {
        int n = io.jobq.application.port.JobStore.PRIORITY_REORDER_LIMIT + 5;
        for (QueueName queue : List.of(QueueName.DEFAULT, CONTROL)) {
            for (int left = n; left > 0; left -= 1000) {
                store.enqueueBatch(new io.jobq.application.port.NewJobBatch(A, queue, TASK,
                        java.util.Collections.nCopies(Math.min(1000, left), "{}"), 5, Duration.ZERO));
            }
        }
        long urgent = store.enqueue(NewJob.of(A, QueueName.DEFAULT, TASK, "{}").withPriority(5)).job().id().value();
        store.enqueue(NewJob.of(A, CONTROL, TASK, "{}"));
        assertThat(tags(QueueName.DEFAULT)).as("the same tags as without priority").isEqualTo(tags(CONTROL));
        long first = db.dsl().resultQuery("SELECT id FROM jobs WHERE queue = 'default' AND state = 'queued' ORDER BY vtime, id LIMIT 1")
                .fetchSingle(0, Long.class);
        assertThat(first).isEqualTo(urgent);
        long moved = db.dsl().resultQuery("""
                SELECT count(*) FROM jobs j JOIN jobs c ON c.queue = 'control' AND c.id = j.id + {0}
                WHERE j.queue = 'default' AND j.vtime <> c.vtime""", n).fetchSingle(0, Long.class);
        assertThat(moved).as("jobs whose tag changed: the limit, and the urgent one").isLessThanOrEqualTo(
                io.jobq.application.port.JobStore.PRIORITY_REORDER_LIMIT + 1L);
    }

    private List<Double> tags(QueueName queue) {
        return db.dsl().resultQuery("SELECT vtime FROM jobs WHERE queue = {0} AND state = 'queued' ORDER BY vtime", queue.value())
                .fetch(0, Double.class);
    }

    @Test
    void aHandWrittenPriorityOutOfRangeIsRefused() {
        long id = store.enqueue(NewJob.of(A, QueueName.DEFAULT, TASK, "{}")).job().id().value();
        assertThatThrownBy(() -> db.execute("UPDATE jobs SET priority = 10 WHERE id = " + id))
                .isInstanceOf(DataAccessException.class).hasMessageContaining("jobs_priority_range");
    }
}
