package io.jobq.domain.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.stream.Stream;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

class JobStateTest {

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
                    .containsExactly("scheduled", "queued", "held", "running", "done", "dead", "cancelled");
        }

        @ParameterizedTest
        @ValueSource(strings = {"paused", "", "QUEUED", "Queued", " queued", "queued "})
        void unknownStatusIsRejectedNamingTheAcceptedValues(String name) {
            // The stored form is exact: upper case or padded text is a bug upstream, not a synonym.
            assertThatThrownBy(() -> JobState.fromDbName(name))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("status must be one of scheduled, queued, held, running, done, dead, cancelled, was \"" + name + "\"");
        }
    }
}
