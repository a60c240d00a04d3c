package io.jobq.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@link PooledTransactions}: jOOQ transactions on the pool without the isolation-level round trip. */
class PooledTransactionsTest extends PostgresStoreTestCase {
    private final AtomicInteger isolationAsked = new AtomicInteger();
    private DataSource counting;

    @BeforeEach
    void probeTable() {
        db.execute("CREATE TABLE IF NOT EXISTS public.tx_probe (x int)");
        db.execute("TRUNCATE public.tx_probe");
        counting = countingIsolationQueries(db.dataSource());
    }

    @Test
    void aTransactionDoesNotAskTheConnectionForItsIsolationLevelAsJooqsOwnProviderDoes() {
        DSLContext ours = JobqSchema.DEFAULT.dsl(counting);
        ours.transaction(cfg -> cfg.dsl().execute("INSERT INTO public.tx_probe VALUES (1)"));
        assertThat(isolationAsked.get()).isZero();

        // jOOQ's default provider on the same pool: one query per transaction (pgjdbc runs SHOW TRANSACTION ISOLATION LEVEL)
        DSL.using(counting, SQLDialect.POSTGRES).transaction(cfg -> cfg.dsl().execute("INSERT INTO public.tx_probe VALUES (2)"));
        assertThat(isolationAsked.get()).isPositive();
        assertThat(values()).as("both committed").isEqualTo(3);
    }

    @Test
    void commitRollbackAndANestedRollbackToItsSavepointBehaveAsJooqs() {
        DSLContext dsl = JobqSchema.DEFAULT.dsl(db.dataSource());
        dsl.transaction(cfg -> {
            cfg.dsl().execute("INSERT INTO public.tx_probe VALUES (1)");
            assertThatThrownBy(() -> cfg.dsl().transaction(inner -> {
                inner.dsl().execute("INSERT INTO public.tx_probe VALUES (100)");
                throw new IllegalStateException("inner fails");
            })).hasMessageContaining("inner fails");
            cfg.dsl().transaction(inner -> inner.dsl().execute("INSERT INTO public.tx_probe VALUES (10)"));
        });
        assertThatThrownBy(() -> dsl.transaction(cfg -> {
            cfg.dsl().execute("INSERT INTO public.tx_probe VALUES (1000)");
            throw new IllegalStateException("outer fails");
        })).hasMessageContaining("outer fails");

        assertThat(values()).as("1 and 10 committed; the failed inner and outer work rolled back").isEqualTo(11);
        assertThat(db.dataSource().getHikariPoolMXBean().getActiveConnections()).as("connections given back").isZero();
        // auto-commit is back on for the next borrower: a plain statement commits by itself
        dsl.execute("INSERT INTO public.tx_probe VALUES (5)");
        assertThat(values()).isEqualTo(16);
    }

    private long values() {
        return db.dsl().fetchOne("SELECT coalesce(sum(x), 0) FROM public.tx_probe").get(0, Long.class);
    }

    /** {@code pool}, counting every {@link Connection#getTransactionIsolation} on the connections it hands out. */
    private DataSource countingIsolationQueries(DataSource pool) {
        InvocationHandler onDataSource = (proxy, method, args) -> {
            Object result = invoke(pool, method, args);
            if (!(result instanceof Connection c)) return result;
            return Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class}, (p, m, a) -> {
                if (m.getName().equals("getTransactionIsolation")) isolationAsked.incrementAndGet();
                return invoke(c, m, a);
            });
        };
        return (DataSource) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {DataSource.class}, onDataSource);
    }

    private static Object invoke(Object target, java.lang.reflect.Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
