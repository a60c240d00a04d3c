package io.jobq.archfixture.application;

import java.sql.Connection;
import javax.sql.DataSource;

/** Violating DOMAIN_AND_APPLICATION_DO_NOT_USE_JDBC: a use case that opens connections itself. */
public final class JdbcUsingUseCase {
    private final DataSource dataSource;

    public JdbcUsingUseCase(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    public Connection open() throws java.sql.SQLException {
        return dataSource.getConnection();
    }
}
