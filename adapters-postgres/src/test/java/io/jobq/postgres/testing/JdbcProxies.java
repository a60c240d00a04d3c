package io.jobq.postgres.testing;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;

/**
 * Recorders around real JDBC objects (a {@code DataSource}, its connections, their statements), for
 * tests that must see what the store sends to the driver. Every call still reaches the real object;
 * these observe, they do not mock.
 */
public final class JdbcProxies {
    private JdbcProxies() {}

    /** After the real call returns, sees it and returns the result the caller gets (the real one, or a wrapped one). */
    @FunctionalInterface
    public interface After {
        Object apply(Method method, Object[] args, Object result) throws Exception;
    }

    /**
     * A proxy of {@code type} that calls {@code target}, then lets {@code after} see the call. Seeing it
     * after the call keeps a failed execution out of any record (it did not run), and a driver
     * exception surfaces as itself, not wrapped.
     */
    public static <T> T afterEachCall(Class<T> type, T target, After after) {
        InvocationHandler handler = (p, method, args) -> {
            Object result;
            try {
                result = method.invoke(target, args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
            return after.apply(method, args, result);
        };
        return type.cast(Proxy.newProxyInstance(JdbcProxies.class.getClassLoader(), new Class<?>[] {type}, handler));
    }
}
