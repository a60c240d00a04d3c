package io.jobq.domain.job;

import static io.jobq.domain.job.JobState.DEAD;
import static io.jobq.domain.job.JobState.DONE;
import static io.jobq.domain.job.JobState.QUEUED;
import static io.jobq.domain.job.JobState.RUNNING;
import static io.jobq.domain.job.JobState.SCHEDULED;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

class JobStateTest {

    /**
     * The whole transition table, written out pair by pair (5 × 5 = 25 rows) rather than derived
     * from {@link JobState#successors()}, so the test is an independent statement of the design
     * (architecture.md, "The job's life") and not a copy of the code under test.
     */
    static Stream<Arguments> transitionTable() {
        return Stream.of(
                // from       to         legal
                arguments(SCHEDULED, SCHEDULED, false),
                arguments(SCHEDULED, QUEUED, true), // promotion: run_at reached
                arguments(SCHEDULED, RUNNING, false), // a scheduled job is not in the claim index
                arguments(SCHEDULED, DONE, false),
                arguments(SCHEDULED, DEAD, false),

                arguments(QUEUED, SCHEDULED, false),
                arguments(QUEUED, QUEUED, false),
                arguments(QUEUED, RUNNING, true), // claim
                arguments(QUEUED, DONE, false),
                arguments(QUEUED, DEAD, false),

                arguments(RUNNING, SCHEDULED, true), // retryable failure or lease expiry, with backoff
                arguments(RUNNING, QUEUED, false), // a retry always backs off through scheduled
                arguments(RUNNING, RUNNING, false), // a re-claim is a new run, never running → running
                arguments(RUNNING, DONE, true), // complete
                arguments(RUNNING, DEAD, true), // permanent failure or out of attempts

                arguments(DONE, SCHEDULED, false), // done is terminal
                arguments(DONE, QUEUED, false),
                arguments(DONE, RUNNING, false),
                arguments(DONE, DONE, false),
                arguments(DONE, DEAD, false),

                arguments(DEAD, SCHEDULED, false),
                arguments(DEAD, QUEUED, true), // an operator's manual retry
                arguments(DEAD, RUNNING, false),
                arguments(DEAD, DONE, false),
                arguments(DEAD, DEAD, false));
    }

    @Nested
    class Transitions {

        @Test
        void tableCoversEveryOrderedPairExactlyOnce() {
            // Guards the table itself: a deleted or duplicated row would silently shrink coverage.
            List<Arguments> rows = transitionTable().toList();
            Set<List<Object>> pairs = new HashSet<>();
            for (Arguments row : rows) pairs.add(List.of(row.get()[0], row.get()[1]));

            assertThat(rows).hasSize(25);
            assertThat(pairs).hasSize(JobState.values().length * JobState.values().length);
        }

        @ParameterizedTest(name = "{0} -> {1}: legal = {2}")
        @MethodSource("io.jobq.domain.job.JobStateTest#transitionTable")
        void canMoveToAgreesWithTheTable(JobState from, JobState to, boolean legal) {
            assertThat(from.canMoveTo(to)).isEqualTo(legal);
            assertThat(from.successors().contains(to)).isEqualTo(legal);
        }

        @ParameterizedTest(name = "{0} -> {1}: legal = {2}")
        @MethodSource("io.jobq.domain.job.JobStateTest#transitionTable")
        void moveToReturnsTheTargetOrThrowsNamingBothStates(JobState from, JobState to, boolean legal) {
            if (legal) {
                assertThat(from.moveTo(to)).isSameAs(to);
            } else {
                assertThatThrownBy(() -> from.moveTo(to))
                        .isInstanceOfSatisfying(IllegalStateTransitionException.class, e -> {
                            assertThat(e.from()).isSameAs(from);
                            assertThat(e.to()).isSameAs(to);
                        })
                        .hasMessageContaining("from " + from.dbName() + " to " + to.dbName());
            }
        }

        @ParameterizedTest
        @EnumSource(JobState.class)
        void noStateMovesToItself(JobState state) {
            assertThatThrownBy(() -> state.moveTo(state)).isInstanceOf(IllegalStateTransitionException.class);
        }

        @Test
        void successorsIsADefensiveCopy() {
            // Callers get a mutable EnumSet; mutating it must not change the table for everyone else.
            Set<JobState> fromRunning = RUNNING.successors();
            fromRunning.add(QUEUED);
            fromRunning.remove(DONE);

            assertThat(RUNNING.successors()).isEqualTo(EnumSet.of(SCHEDULED, DONE, DEAD));
            assertThat(RUNNING.canMoveTo(DONE)).isTrue();
            assertThat(RUNNING.canMoveTo(QUEUED)).isFalse();
        }

        @Test
        void onlyDoneIsTerminal() {
            for (JobState state : JobState.values()) {
                assertThat(state.isTerminal()).as(state.dbName()).isEqualTo(state == DONE);
                assertThat(state.successors().isEmpty()).as(state.dbName()).isEqualTo(state == DONE);
            }
        }
    }

    @Nested
    class StoredForm {

        @ParameterizedTest
        @EnumSource(JobState.class)
        void dbNameRoundTripsThroughFromDbName(JobState state) {
            assertThat(JobState.fromDbName(state.dbName())).isSameAs(state);
        }

        @Test
        void dbNamesAreTheLowerCaseNamesTheSchemaAndApiUse() {
            assertThat(Stream.of(JobState.values()).map(JobState::dbName))
                    .containsExactly("scheduled", "queued", "running", "done", "dead");
        }

        @ParameterizedTest
        @ValueSource(strings = {"paused", "", "QUEUED", "Queued", " queued", "queued "})
        void unknownStatusIsRejectedNamingTheAcceptedValues(String name) {
            // The stored form is exact: upper case or padded text is a bug upstream, not a synonym.
            assertThatThrownBy(() -> JobState.fromDbName(name))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("status must be one of scheduled, queued, running, done, dead, was \"" + name + "\"");
        }
    }
}
