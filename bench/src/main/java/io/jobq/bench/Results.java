package io.jobq.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Everything one bench invocation measured, experiment by experiment (absent when not run), plus the
 * errors of experiments that failed. Filled by {@link BenchMain}, rendered by {@link Report}.
 */
final class Results {
    List<FairnessExperiment.Result> fairness = List.of();
    /** Long vs short jobs, per fairness mode (run with the fairness experiment). */
    List<WorkShareExperiment.Result> workShare = List.of();
    List<Cell> throughput = List.of();
    List<Cell> floor = List.of();
    List<LatencyExperiment.Result> latency = List.of();
    Optional<ChaosExperiment.Result> chaos = Optional.empty();
    Optional<PeerExperiment.Outcome> peers = Optional.empty();
    List<EnqueueExperiment.Cell> enqueue = List.of();
    Optional<GrowthExperiment.Result> growth = Optional.empty();
    /** jobq as users deploy it: one worker with c slots, per c (the throughput experiment's second part). */
    List<DeploymentCell> deployment = List.of();
    /**
     * How many of the {@code CHECKPOINT}s that start compared runs the server refused (the role is neither
     * superuser nor in pg_checkpoint): those runs started wherever the server's own checkpoints stood.
     */
    int checkpointsRefused;
    /** Experiment name → what went wrong. */
    final Map<String, String> errors = new LinkedHashMap<>();

    /**
     * The checks CI relies on, as messages; empty when all hold. Fair ordering must give small tenants
     * a lower p95 wait than FIFO; a capped flood must never run more than its cap; work fairness must
     * give long and short jobs near-equal worker time, and jobs fairness must not; chaos must lose nothing and complete nothing twice; no experiment
     * may have failed. No speed thresholds: the machine is shared and noisy.
     */
    List<String> failedChecks() {
        List<String> out = new ArrayList<>();
        errors.forEach((name, error) -> out.add(name + " failed: " + error));
        // A peer that does not run is the bench's own fault (its setup of that peer), not a speed result.
        peers.ifPresent(p -> p.results().forEach(r -> r.error().ifPresent(e ->
                out.add("peers: " + r.system() + " at concurrency " + r.concurrency() + " failed: " + e))));
        Optional<FairnessExperiment.Result> fifo = fairness.stream().filter(r -> r.order() == io.jobq.postgres.ClaimOrder.FIFO).findFirst();
        Optional<FairnessExperiment.Result> fair = fairness.stream()
                .filter(r -> r.order() == io.jobq.postgres.ClaimOrder.FAIR && r.cap().isEmpty()).findFirst();
        if (fifo.isPresent() && fair.isPresent() && !(fair.get().smallWaitMs().p95() < fifo.get().smallWaitMs().p95())) {
            out.add("fairness: fair p95 wait of small tenants (" + Format.millis(fair.get().smallWaitMs().p95())
                    + ") is not lower than FIFO's (" + Format.millis(fifo.get().smallWaitMs().p95()) + ")");
        }
        for (FairnessExperiment.Result r : fairness) {
            r.cap().filter(cap -> r.bigMostRunning() > cap).ifPresent(cap -> out.add("fairness: the flood tenant capped at "
                    + cap + " was seen with " + r.bigMostRunning() + " jobs running at once"));
        }
        out.addAll(WorkShareExperiment.failedChecks(workShare));
        chaos.ifPresent(c -> {
            if (c.lost() > 0) out.add("chaos: " + c.lost() + " job(s) lost");
            if (c.doneTwice() > 0) out.add("chaos: " + c.doneTwice() + " job(s) recorded done twice");
            if (c.sameAttemptTwice() > 0) out.add("chaos: " + c.sameAttemptTwice() + " (job, attempt) pair(s) ran twice");
            if (c.doneWithoutEffect() > 0) out.add("chaos: " + c.doneWithoutEffect() + " job(s) done without their attempt's side effect");
        });
        return out;
    }
}
