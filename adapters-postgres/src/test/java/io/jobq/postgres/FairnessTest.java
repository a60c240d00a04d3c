package io.jobq.postgres;

import static io.jobq.application.port.FairnessContract.ALL_LATE_JOBS_IN_WINDOW;
import static io.jobq.application.port.FairnessContract.OWN_ORDER_AND_FAIR_SHARE;
import static io.jobq.application.port.FairnessContract.SHARES_ON_RETURN;
import static io.jobq.application.port.FairnessContract.STRICT_TURNS;
import static io.jobq.application.port.FairnessContract.THREE_TO_ONE;
import static io.jobq.application.port.FairnessContract.count;
import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.application.port.FairnessContract;
import io.jobq.application.port.JobStore;
import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The FIFO half of the fairness scenarios. Every store must meet each {@link FairnessContract} condition
 * under fair order (the contract runs them against both stores); here the same scenarios run against the
 * PostgreSQL store claiming in id order ({@link ClaimOrder#FIFO}), tags handed out exactly the same way, and
 * each condition must FAIL. That is what proves a scenario exercises fairness at all.
 */
@ExtendWith(PostgresDatabaseExtension.class)
class FairnessTest {

    FairnessContract fifo;

    @BeforeEach
    void setUp(TestDatabase db) {
        db.emptyTables();
        PostgresJobStore store = new PostgresJobStore(db.dataSource(), PostgresJobStore.Options.DEFAULTS.withClaimOrder(ClaimOrder.FIFO));
        fifo = new FairnessContract() {
            @Override
            protected JobStore store() {
                return store;
            }

            @Override
            protected void advanceTime(Duration by) {
                db.execute("UPDATE jobs SET run_at = run_at - {0}::bigint * interval '1 millisecond'", by.toMillis());
            }
        };
    }

    @Test
    void underFifoOrderALateTenantWaitsBehindTheFlood() {
        List<String> next = fifo.lateTenantAmongAFlood();
        assertThat(next).isNot(ALL_LATE_JOBS_IN_WINDOW);
        assertThat(next).as("the 900 queued flood jobs all precede b's").containsOnly("a");
    }

    @Test
    void underFifoOrderEachBacklogRunsToTheEndBeforeTheNextTenantsFirstJob() {
        List<String> seq = fifo.threeBacklogs();
        assertThat(seq).isNot(STRICT_TURNS);
        List<String> expected = new ArrayList<>();
        for (String t : List.of("a", "b", "c")) expected.addAll(Collections.nCopies(30, t));
        assertThat(seq).isEqualTo(expected);
    }

    @Test
    void underFifoOrderClaimsFollowArrivalAndIgnoreWeights() {
        List<String> seq = fifo.weightedBacklogs();
        assertThat(seq).isNot(THREE_TO_ONE);
        // 400 claims by id = four rounds of 50 heavy + 50 light
        assertThat(count(seq, "heavy")).isEqualTo(200);
        assertThat(count(seq, "light")).isEqualTo(200);
    }

    @Test
    void underFifoOrderAReturningTenantsBurstWaitsBehindTheBusyTenantsWholeBacklog() {
        List<String> seq = fifo.idleTenantReturns();
        assertThat(seq).isNot(SHARES_ON_RETURN);
        // violated in the other direction from banked credit: b gets nothing, not everything
        assertThat(seq).containsOnly("a");
    }

    @Test
    void underFifoOrderAnOldDelayedJobJumpsTheTenantsBacklogAndNewJobsWaitBehindEveryone() {
        FairnessContract.OwnBacklog run = fifo.newJobsBehindOwnBacklog();
        assertThat(run).isNot(OWN_ORDER_AND_FAIR_SHARE);
        List<FairnessContract.Claimed> seq = run.claims();
        List<Long> runnable = run.runnableOrderOfA();
        assertThat(seq.get(6).id()).as("the promoted job (a's oldest id) is claimed next, ahead of a's backlog")
                .isEqualTo(runnable.get(10));
        assertThat(seq.subList(seq.size() - 5, seq.size())).as("a's new jobs come last of all")
                .extracting(FairnessContract.Claimed::id).containsExactlyElementsOf(runnable.subList(11, 16));
    }
}
