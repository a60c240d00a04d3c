package io.jobq.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

class DatabaseUrlTest {

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            postgres://app:s3cret@db.example:6543/jobs                 | jdbc:postgresql://db.example:6543/jobs?user=app&password=s3cret | jobs
            postgresql://app@localhost/jobq                            | jdbc:postgresql://localhost:5432/jobq?user=app                  | jobq
            postgres://localhost/jobq?sslmode=require                  | jdbc:postgresql://localhost:5432/jobq?sslmode=require           | jobq
            postgres://u%40corp:p%3Aw%26d@h:5432/db                    | jdbc:postgresql://h:5432/db?user=u%40corp&password=p%3Aw%26d    | db
            jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres    | jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres         | postgres
            """)
    void bothFormsBecomeAJdbcUrl(String given, String jdbc, String database) {
        DatabaseUrl url = DatabaseUrl.parse(given);
        assertThat(url.jdbcUrl()).isEqualTo(jdbc);
        assertThat(url.database()).isEqualTo(database);
    }

    @Test
    void maskedHidesThePasswordEverywhere() {
        DatabaseUrl url = DatabaseUrl.parse("postgres://app:s3cret@h/db");
        assertThat(url.masked()).doesNotContain("s3cret").contains("password=***");
        assertThat(url.toString()).doesNotContain("s3cret");
    }

    @Test
    void withDatabaseKeepsServerAndCredentials() {
        DatabaseUrl url = DatabaseUrl.parse("postgres://app:pw@h:1234/jobq?sslmode=disable").withDatabase("postgres");
        assertThat(url.jdbcUrl()).isEqualTo("jdbc:postgresql://h:1234/postgres?user=app&password=pw&sslmode=disable");
        assertThat(url.user()).contains("app");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "mysql://h/db", "postgres://h", "postgres:///db", "jdbc:postgresql://h:5432", "postgres://h:5432/"})
    void malformedUrlsAreRefusedWithAReason(String given) {
        assertThatThrownBy(() -> DatabaseUrl.parse(given)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageNotContaining("s3cret");
    }
}
