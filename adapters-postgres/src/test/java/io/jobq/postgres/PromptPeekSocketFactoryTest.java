package io.jobq.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.jobq.postgres.PromptPeekSocketFactory.PromptPeekInputStream;
import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;
import java.util.function.IntSupplier;
import javax.net.SocketFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * The listener's sockets answer pgjdbc's 1 ms "anything pending?" read at once when nothing is, and leave
 * every other read to the socket; a real listener connection made with them receives notifications.
 */
@ExtendWith(PostgresDatabaseExtension.class)
class PromptPeekSocketFactoryTest {

    /** A socket stream with {@code available} bytes readable; a read that would have to wait fails the test. */
    static final class SocketInput extends InputStream {
        int available;
        int reads;

        @Override
        public int available() {
            return available;
        }

        @Override
        public int read() throws IOException {
            reads++;
            if (available == 0) throw new AssertionError("went to the socket and would have waited for a byte");
            available--;
            return 'A';
        }
    }

    static final BiFunction<InputStream, IntSupplier, InputStream> PROMPT = PromptPeekInputStream::new;
    /** The wrong variant: the socket's stream as it is, which waits out the millisecond. */
    static final BiFunction<InputStream, IntSupplier, InputStream> PLAIN = (in, timeout) -> new FilterInputStream(in) {};

    @Test
    void aPeekWithNothingPendingIsAnsweredWithoutGoingToTheSocket() throws IOException {
        SocketInput socket = new SocketInput();
        assertThatThrownBy(() -> peekWithNothingPending(PROMPT, socket)).isInstanceOf(SocketTimeoutException.class);
        assertThat(socket.reads).isZero();
    }

    @Test
    void theWrongVariantGoesToTheSocketAndWaits() {
        SocketInput socket = new SocketInput();
        assertThatThrownBy(() -> peekWithNothingPending(PLAIN, socket)).isInstanceOf(AssertionError.class)
                .hasMessageContaining("would have waited");
        assertThat(socket.reads).isEqualTo(1);
    }

    private static void peekWithNothingPending(BiFunction<InputStream, IntSupplier, InputStream> variant, SocketInput socket)
            throws IOException {
        InputStream in = variant.apply(socket, () -> PromptPeekSocketFactory.PEEK_TIMEOUT_MS);
        in.read(new byte[8], 0, 8);
    }

    @Test
    void aPeekWithBytesPendingAndEveryOtherReadGoToTheSocket() throws IOException {
        SocketInput socket = new SocketInput();
        AtomicInteger timeout = new AtomicInteger(PromptPeekSocketFactory.PEEK_TIMEOUT_MS);
        InputStream in = new PromptPeekInputStream(socket, timeout::get);
        socket.available = 2;
        assertThat(in.read(new byte[8], 0, 1)).isEqualTo(1);
        assertThat(in.read()).isEqualTo('A');
        timeout.set(250); // a notification wait: its read must block on the socket (here: reach it)
        assertThatThrownBy(in::read).isInstanceOf(AssertionError.class);
        timeout.set(0);
        assertThatThrownBy(() -> in.read(new byte[8], 0, 8)).isInstanceOf(AssertionError.class);
        assertThat(socket.reads).isEqualTo(4);
        assertThat(in.read(new byte[0], 0, 0)).as("an empty read asks for nothing").isZero();
    }

    @Test
    void aRealSocketAnswersTheOneMillisecondPeekItselfAndLeavesOtherTimeoutsToTheSocket() throws Exception {
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                Socket client = new PromptPeekSocketFactory().createSocket(InetAddress.getLoopbackAddress(), server.getLocalPort());
                Socket peer = server.accept()) {
            client.setSoTimeout(PromptPeekSocketFactory.PEEK_TIMEOUT_MS);
            InputStream in = client.getInputStream();
            assertThatThrownBy(() -> in.read(new byte[8], 0, 8)).isInstanceOf(SocketTimeoutException.class)
                    .hasMessageContaining("answered without the 1 ms wait");
            peer.getOutputStream().write(new byte[] {1, 2, 3});
            peer.getOutputStream().flush();
            await(() -> in.available() == 3);
            assertThat(in.read(new byte[8], 0, 8)).as("bytes pending: read under the peek's timeout").isEqualTo(3);
            client.setSoTimeout(20);
            assertThatThrownBy(in::read).as("another timeout: the socket's own wait")
                    .isInstanceOf(SocketTimeoutException.class).hasMessageNotContaining("answered without");
        }
    }

    @Test
    void theWrongVariantAPlainSocketWaitsOutTheMillisecond() throws Exception {
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                Socket client = SocketFactory.getDefault().createSocket(InetAddress.getLoopbackAddress(), server.getLocalPort());
                Socket peer = server.accept()) {
            client.setSoTimeout(PromptPeekSocketFactory.PEEK_TIMEOUT_MS);
            assertThatThrownBy(() -> client.getInputStream().read()).isInstanceOf(SocketTimeoutException.class)
                    .hasMessageNotContaining("answered without");
        }
    }

    private static void await(IoCondition condition) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.holds()) {
            if (System.nanoTime() > deadline) throw new AssertionError("timed out");
            Thread.sleep(1);
        }
    }

    @FunctionalInterface
    interface IoCondition {
        boolean holds() throws IOException;
    }

    @Test
    void theListenerUsesItUnlessTheUrlAsksForGssEncryption() {
        String url = "jdbc:postgresql://127.0.0.1:5432/db?user=u";
        assertThat(PostgresWakeupChannel.listenProperties(url).getProperty("socketFactory"))
                .isEqualTo(PromptPeekSocketFactory.class.getName());
        assertThat(PostgresWakeupChannel.listenProperties(url + "&gssEncMode=allow").getProperty("socketFactory")).isNotNull();
        assertThat(PostgresWakeupChannel.listenProperties(url + "&gssEncMode=prefer").getProperty("socketFactory")).isNull();
        assertThat(PostgresWakeupChannel.listenProperties(url + "&gssEncMode=require").getProperty("socketFactory")).isNull();
    }

    @Test
    void theListenersConnectionReceivesNotificationsThroughIt(TestDatabase db) throws Exception {
        try (Connection listener = PostgresWakeupChannel.openListenConnection(db.jdbcUrl());
                Connection sender = db.dataSource().getConnection();
                Statement listen = listener.createStatement();
                Statement notify = sender.createStatement()) {
            listen.execute("LISTEN prompt_peek");
            PGConnection pg = listener.unwrap(PGConnection.class);
            for (int round = 1; round <= 3; round++) {
                notify.execute("NOTIFY prompt_peek, 'a" + round + "'; NOTIFY prompt_peek, 'b" + round + "'");
                List<String> got = new ArrayList<>();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (got.size() < 2 && System.nanoTime() < deadline) {
                    for (PGNotification n : pg.getNotifications(1_000)) got.add(n.getParameter());
                }
                assertThat(got).containsExactly("a" + round, "b" + round);
                assertThat(pg.getNotifications(50)).as("nothing more").isEmpty();
            }
        }
    }

    /** Counts the sockets pgjdbc asks it for: proves a socketFactory named in the URL is the one used. */
    public static final class CountingSocketFactory extends SocketFactory {
        static final AtomicInteger CREATED = new AtomicInteger();

        @Override
        public Socket createSocket() {
            CREATED.incrementAndGet();
            return new Socket();
        }

        @Override
        public Socket createSocket(String host, int port) throws IOException {
            return SocketFactory.getDefault().createSocket(host, port);
        }

        @Override
        public Socket createSocket(String host, int port, InetAddress local, int localPort) throws IOException {
            return SocketFactory.getDefault().createSocket(host, port, local, localPort);
        }

        @Override
        public Socket createSocket(InetAddress host, int port) throws IOException {
            return SocketFactory.getDefault().createSocket(host, port);
        }

        @Override
        public Socket createSocket(InetAddress host, int port, InetAddress local, int localPort)
                throws IOException {
            return SocketFactory.getDefault().createSocket(host, port, local, localPort);
        }
    }

    @Test
    void aSocketFactoryNamedInTheListenUrlWins(TestDatabase db) throws Exception {
        int before = CountingSocketFactory.CREATED.get();
        String url = db.jdbcUrl() + (db.jdbcUrl().contains("?") ? "&" : "?") + "socketFactory=" + CountingSocketFactory.class.getName();
        try (Connection c = PostgresWakeupChannel.openListenConnection(url); Statement st = c.createStatement()) {
            st.execute("SELECT 1");
        }
        assertThat(CountingSocketFactory.CREATED.get()).isEqualTo(before + 1);
    }
}
