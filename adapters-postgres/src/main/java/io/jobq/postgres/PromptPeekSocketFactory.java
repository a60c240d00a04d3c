package io.jobq.postgres;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.util.function.IntSupplier;
import javax.net.SocketFactory;

/**
 * The sockets of the wake-up listener's connection (pgjdbc's {@code socketFactory} property): plain TCP
 * sockets whose "is anything pending?" check answers at once instead of after a millisecond.
 *
 * <p>Why: after pgjdbc 42.7 reads a notification in {@code getNotifications(timeout)}, it asks whether
 * more messages are pending by reading with a socket timeout of 1 ms ({@code PGStream.hasMessagePending}),
 * and, on a plain socket, that read waits the whole millisecond whenever nothing is pending, which is
 * every time: each wake-up reached the worker 1.2–1.5 ms late, the millisecond and its system calls (seen
 * with {@code strace -f} on the bench's pickup experiment: {@code read → EAGAIN; poll(fd, 1 ms) = 0
 * (Timeout)} after every notification).
 * Here a read made while the socket timeout is exactly 1 ms, with no byte readable without blocking
 * ({@link InputStream#available()}), throws {@link SocketTimeoutException} at once: the answer the
 * millisecond would have given, without the wait. Every other read, and every read with another timeout,
 * goes to the socket unchanged. Data arriving just after the check is read by the next call, as data
 * arriving just after the millisecond would have been.
 *
 * <p>Only the listener's own connection uses it ({@code PostgresWakeupChannel.listenProperties}); a
 * {@code socketFactory} named in the listen URL takes precedence, and a URL asking for GSS encryption gets
 * none (pgjdbc reads those through a stream that retries a timed-out read, so the peek would spin). Over TLS,
 * JSSE's socket layered on this one forwards its timeout and reads here: a peek with nothing readable is
 * answered at once as above; one that finds part of a TLS record has its next read answered "timed out" in
 * mid-record, which JSSE (21, 25) survives as it survives a real timeout, keeping the part it read. pgjdbc
 * uses a 1 ms timeout for nothing else unless told to: a {@code getNotifications} wait with 1 ms left returns
 * that millisecond early (so {@link PostgresWakeupChannel.Options} refuses a poll timeout under 2 ms), and an
 * {@code sslResponseTimeout} or {@code gssResponseTimeout} of 1 ms would answer at once.
 */
public final class PromptPeekSocketFactory extends SocketFactory {
    /** The socket timeout, in ms, that pgjdbc sets for its pending-message check. */
    static final int PEEK_TIMEOUT_MS = 1;

    /** pgjdbc creates the factory by reflection, through this constructor. */
    public PromptPeekSocketFactory() {}

    /** An unconnected socket, as pgjdbc asks for (it connects it itself, with its connect timeout). */
    @Override
    public Socket createSocket() {
        return new PromptPeekSocket();
    }

    @Override
    public Socket createSocket(String host, int port) throws IOException {
        return connected(new InetSocketAddress(host, port), null);
    }

    @Override
    public Socket createSocket(String host, int port, InetAddress localHost, int localPort) throws IOException {
        return connected(new InetSocketAddress(host, port), new InetSocketAddress(localHost, localPort));
    }

    @Override
    public Socket createSocket(InetAddress host, int port) throws IOException {
        return connected(new InetSocketAddress(host, port), null);
    }

    @Override
    public Socket createSocket(InetAddress address, int port, InetAddress localAddress, int localPort) throws IOException {
        return connected(new InetSocketAddress(address, port), new InetSocketAddress(localAddress, localPort));
    }

    private static Socket connected(InetSocketAddress remote, InetSocketAddress local) throws IOException {
        Socket s = new PromptPeekSocket();
        try {
            if (local != null) s.bind(local);
            s.connect(remote);
            return s;
        } catch (IOException e) {
            s.close();
            throw e;
        }
    }

    /** A TCP socket that remembers its timeout, so its input stream can tell a 1 ms peek from a read. */
    private static final class PromptPeekSocket extends Socket {
        private volatile int timeoutMs;
        private InputStream in;

        @Override
        public void setSoTimeout(int timeout) throws SocketException {
            super.setSoTimeout(timeout);
            timeoutMs = timeout;
        }

        @Override
        public synchronized InputStream getInputStream() throws IOException {
            if (in == null) in = new PromptPeekInputStream(super.getInputStream(), () -> timeoutMs);
            return in;
        }
    }

    /**
     * A socket's input stream whose reads under a {@value #PEEK_TIMEOUT_MS} ms timeout do not wait for bytes
     * that are not there yet. Package-private for its test.
     */
    static final class PromptPeekInputStream extends FilterInputStream {
        private final IntSupplier timeoutMs;

        /** @param timeoutMs the socket's current read timeout, ms (0: none) */
        PromptPeekInputStream(InputStream socketInput, IntSupplier timeoutMs) {
            super(socketInput);
            this.timeoutMs = timeoutMs;
        }

        @Override
        public int read() throws IOException {
            answerPeekAtOnce();
            return super.read();
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (len > 0) answerPeekAtOnce();
            return super.read(b, off, len);
        }

        private void answerPeekAtOnce() throws IOException {
            if (timeoutMs.getAsInt() == PEEK_TIMEOUT_MS && in.available() == 0) {
                throw new SocketTimeoutException("nothing pending (answered without the 1 ms wait)");
            }
        }
    }
}
