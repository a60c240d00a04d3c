package io.jobq.application.port;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ConnectException;
import org.junit.jupiter.api.Test;

class ThrowablesTest {

    @Test
    void rootMessageIsTheInnermostCausesMessage() {
        var e = new JobQueueException("claim failed", new IllegalStateException("pool", new ConnectException("refused")));
        assertThat(Throwables.rootCause(e)).isInstanceOf(ConnectException.class);
        assertThat(Throwables.rootMessage(e)).isEqualTo("refused");
    }

    @Test
    void aFailureWithoutCauseIsItsOwnRoot() {
        var e = new IOException("disk full");
        assertThat(Throwables.rootCause(e)).isSameAs(e);
        assertThat(Throwables.rootMessage(e)).isEqualTo("disk full");
    }

    @Test
    void aRootWithoutMessageIsNamedByItsClass() {
        var e = new JobQueueException("x", new NullPointerException());
        assertThat(Throwables.rootMessage(e)).isEqualTo("java.lang.NullPointerException");
    }
}
