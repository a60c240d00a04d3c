package io.jobq.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@link JobqSchema}: which names it takes, and how it rewrites plain SQL for another schema. */
class JobqSchemaTest {
    @ParameterizedTest
    @ValueSource(strings = {"jobq", "public", "billing_jobs", "_q1", "a23456789012345678901234567890123456789012345678901234567890123"})
    void aPlainLowerCaseIdentifierIsTaken(String name) {
        assertThat(JobqSchema.of(name).name()).isEqualTo(name);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "Jobq", "job-q", "1jobq", "pg_jobq", "user", "order", "select", "left", "jobq; DROP TABLE x",
            "a234567890123456789012345678901234567890123456789012345678901234"})
    void anythingElseIsRefusedNamingTheSetting(String name) {
        assertThatThrownBy(() -> JobqSchema.of(name)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("schema must be");
    }

    @Test
    void plainSqlIsRewrittenOnlyWhereItNamesJobqsObjects() {
        String sql = "SELECT jobq.jobq_payload_problem(p) FROM jobq.jobs j, jobq.tenants t, other.jobs o "
                + "WHERE c.relnamespace = 'jobq'::regnamespace AND note = 'jobq.jobsite'";
        assertThat(JobqSchema.DEFAULT.sql(sql)).isSameAs(sql);
        assertThat(JobqSchema.of("billing").sql(sql)).isEqualTo("SELECT billing.jobq_payload_problem(p) FROM billing.jobs j, "
                + "billing.tenants t, other.jobs o WHERE c.relnamespace = 'billing'::regnamespace AND note = 'jobq.jobsite'");
    }
}
