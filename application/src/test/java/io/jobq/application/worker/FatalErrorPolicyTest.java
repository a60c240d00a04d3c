package io.jobq.application.worker;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOError;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;

class FatalErrorPolicyTest {

    @Test
    void virtualMachineErrorsButStackOverflowAreFatal() {
        assertThat(FatalErrorPolicy.isFatal(new OutOfMemoryError("Java heap space"))).isTrue();
        assertThat(FatalErrorPolicy.isFatal(new OutOfMemoryError("unable to create native thread"))).isTrue();
        assertThat(FatalErrorPolicy.isFatal(new InternalError())).isTrue();
        assertThat(FatalErrorPolicy.isFatal(new UnknownError())).isTrue();

        assertThat(FatalErrorPolicy.isFatal(new StackOverflowError())).isFalse();
        assertThat(FatalErrorPolicy.isFatal(new AssertionError())).isFalse();
        assertThat(FatalErrorPolicy.isFatal(new NoClassDefFoundError())).isFalse();
        assertThat(FatalErrorPolicy.isFatal(new ExceptionInInitializerError())).isFalse();
        assertThat(FatalErrorPolicy.isFatal(new IOError(new RuntimeException()))).isFalse();
        assertThat(FatalErrorPolicy.isFatal(new IllegalStateException())).isFalse();
    }

    @Test
    void aFatalErrorAmongTheCausesIsFatal() {
        // The PostgreSQL driver's report of running out of memory while reading a result, as the store wraps it.
        Throwable wrapped = new IllegalStateException("claim failed",
                new SQLException("Ran out of memory retrieving query results.", "53200", new OutOfMemoryError()));
        assertThat(FatalErrorPolicy.isFatal(wrapped)).isTrue();
        assertThat(FatalErrorPolicy.isFatal(new ExceptionInInitializerError(new OutOfMemoryError()))).isTrue();
        assertThat(FatalErrorPolicy.isFatal(new IllegalStateException(new StackOverflowError()))).isFalse();
    }

    @Test
    void aCycleOfCausesEnds() {
        IllegalStateException a = new IllegalStateException("a");
        IllegalArgumentException b = new IllegalArgumentException("b", a);
        a.initCause(b);

        assertThat(FatalErrorPolicy.isFatal(a)).isFalse();
    }
}
