package io.jobq.postgres;

import static io.jobq.postgres.StoreFixtures.Q;
import static io.jobq.postgres.StoreFixtures.TASK;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.jobq.application.port.NewJobBatch;
import io.jobq.domain.fairness.Fairness;
import io.jobq.domain.tenant.TenantId;
import java.time.Duration;
import java.util.Collections;
import org.junit.jupiter.api.Test;

/** measured_runs refuses rows RELEASE could not fold: such a row would fail every enqueue of its tenant. */
class MeasuredRunsRowsTest extends PostgresStoreTestCase {
    static final TenantId A = TenantId.of("a");

    void enqueue(TenantId tenant, int n) {
        store.enqueueBatch(new NewJobBatch(tenant, Q, TASK, Collections.nCopies(n, "{}"), 5, Duration.ZERO));
    }

    /**
     * A row RELEASE could not fold (an average beyond tenants_run_ms_range) would fail the fold, roll back
     * its DELETE and so fail every later enqueue of its tenant in the work queue, for ever. The schema
     * refuses it; rows within the bounds fold, and the tenant's enqueues go on.
     */
    @Test
    void measuredRunsRefusesARowThatCouldNotBeFoldedAndFoldsOneThatCan() {
        store.configureQueue(Q, Fairness.WORK);
        enqueue(A, 1);
        assertThatThrownBy(() -> db.execute(
                "INSERT INTO measured_runs (queue, tenant, runs, measured_ms, charged_ms) VALUES ('default', 'a', 1, 5e12, 1)"))
                .hasMessageContaining("measured_runs_measured_range");
        assertThatThrownBy(() -> db.execute(
                "INSERT INTO measured_runs (queue, tenant, runs, measured_ms, charged_ms) VALUES ('default', 'a', 1, 1, 1e12)"))
                .hasMessageContaining("measured_runs_charged_range");
        db.execute("INSERT INTO measured_runs (queue, tenant, runs, measured_ms, charged_ms) VALUES ('default', 'a', 2, 2e9, 1)");
        assertThatCode(() -> enqueue(A, 1)).as("enqueue after the largest row the schema allows").doesNotThrowAnyException();
        assertThat(db.dsl().resultQuery("SELECT count(*) FROM measured_runs").fetchSingle(0, Long.class)).as("folded").isZero();
    }
}
