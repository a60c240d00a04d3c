/**
 * The benchmark harness behind {@code java -jar jobq-bench.jar all}: the seed's four experiments
 * (noisy neighbour, throughput, pickup latency, crash recovery) run on jobq's own code, plus the
 * raw-SQL floor that shows how much the worker runtime costs on top of its two statements.
 *
 * <p>Nothing in jobq may depend on this package; it depends on everything (through bootstrap).
 */
package io.jobq.bench;
