package io.jobq.postgres;

import static io.jobq.postgres.schema.Tables.JOBS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import java.sql.Connection;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link TimestamptzBinding}: the generated columns read every finite timestamptz as the instant jOOQ's own
 * reading gives, in session time zones with odd offsets, and read the infinities jOOQ throws on.
 */
@ExtendWith(PostgresDatabaseExtension.class)
class TimestamptzBindingTest {
    static final String[] ZONES = {"UTC", "Asia/Kathmandu", "America/St_Johns"};
    static final String[] FINITE = {"2026-12-02 22:00:00.123456+00", "1900-01-01 00:00:00+00", "0044-03-15 12:00:00+00 BC",
            "4713-01-01 00:00:00+00 BC", "294276-12-31 23:59:59.999999+00", "2026-03-29 01:30:00+01"};

    /** jOOQ's reading, without the binding: a plain field of the same data type. */
    static final Field<OffsetDateTime> JOOQS = DSL.field("t", SQLDataType.TIMESTAMPWITHTIMEZONE);

    @Test
    void finiteValuesReadAsTheInstantsJooqReadsInAnySessionTimeZone(TestDatabase db) throws Exception {
        try (Connection c = db.dataSource().getConnection()) {
            DSLContext dsl = DSL.using(c, SQLDialect.POSTGRES);
            for (String zone : ZONES) {
                dsl.execute("SELECT set_config('TimeZone', ?, false)", zone);
                // enough executions that pgjdbc switches to a server-prepared statement (its prepareThreshold, 5)
                for (int round = 0; round < 7; round++) {
                    for (String value : FINITE) {
                        OffsetDateTime ours = read(dsl, JOBS.RUN_AT, value);
                        OffsetDateTime jooqs = read(dsl, JOOQS, value);
                        assertThat(ours.toInstant()).as("%s in %s", value, zone).isEqualTo(jooqs.toInstant());
                        assertThat(ours.getOffset()).isEqualTo(ZoneOffset.UTC);
                    }
                }
            }
        }
    }

    @Test
    void theInfinitiesReadAsTheExtremesWhereJooqThrows(TestDatabase db) {
        DSLContext dsl = db.dsl();
        assertThat(read(dsl, JOBS.RUN_AT, "infinity")).isEqualTo(OffsetDateTime.MAX);
        assertThat(read(dsl, JOBS.RUN_AT, "-infinity")).isEqualTo(OffsetDateTime.MIN);
        assertThat(read(dsl, JOBS.RUN_AT, null)).isNull();
        assertThatThrownBy(() -> read(dsl, JOOQS, "infinity")).as("the reason for the binding").isNotNull();
    }

    @Test
    void writesKeepTheInstant(TestDatabase db) {
        DSLContext dsl = db.dsl();
        OffsetDateTime odd = OffsetDateTime.of(2026, 12, 2, 3, 45, 0, 123_456_000, ZoneOffset.ofHoursMinutes(5, 45));
        OffsetDateTime back = dsl.select(DSL.val(odd, JOBS.RUN_AT).as("t")).fetchSingle().get(0, OffsetDateTime.class);
        assertThat(back.toInstant()).isEqualTo(odd.toInstant());
    }

    /** {@code value} (null for SQL NULL) cast to timestamptz on the server, read through {@code as}'s binding. */
    static OffsetDateTime read(DSLContext dsl, Field<OffsetDateTime> as, String value) {
        return dsl.resultQuery("SELECT cast({0} AS timestamptz) AS t", DSL.val(value, SQLDataType.VARCHAR))
                .coerce(as).fetchSingle().value1();
    }
}
