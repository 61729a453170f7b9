/*
 * Copyright 2026-present the original author or authors.
 *
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * You may obtain a copy of the License at
 *
 *      https://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */

package dev.idempotency.test;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP fault proxy for tests that puts a controllable network between a client and a
 * real server: it listens on an ephemeral loopback port and forwards every connection to
 * a target address, and it can {@link #cut() cut} the network (reset and refuse
 * connections), {@link #pause() pause} it (hang them) or {@link #setDelay(Duration) slow
 * it down} on demand. It knows nothing of the protocol, so it works in front of any
 * server: Redis, PostgreSQL or the server behind a custom {@code IdempotencyStore}.
 * <p>
 * Its main use is to test how a store and its client behave when the server fails or
 * stalls: point the store's client at {@link #host()}:{@link #port()} instead of the
 * server, then check that an operation started during a {@link #pause()} ends within the
 * client's time-outs and that the store recovers after {@link #resume()} or
 * {@link #restore()}: <pre class="code">
 * try (TcpProxy proxy = TcpProxy.start("localhost", 6379)) {
 *     // a client that gives up after one second
 *     MyIdempotencyStore store = new MyIdempotencyStore(proxy.host(), proxy.port(), Duration.ofSeconds(1));
 *     proxy.pause();
 *     assertThatException().isThrownBy(() -&gt; store.find(key));
 *     proxy.resume();
 *     assertThat(store.find(key)).isEmpty();
 * }
 * </pre>
 * <ul>
 * <li>{@link #cut()} resets (TCP RST) every open connection, on both sides, and resets
 * every new connection as soon as it is accepted, until {@link #restore()}. Clients see
 * what they see when a server or a network link dies: "connection reset" on live
 * connections and failed reconnections. The listening port stays bound, so a client can
 * reconnect to the same address once the network is restored.
 * <li>{@link #pause()} holds every chunk read from either side, on live and new
 * connections, until {@link #resume()}, and then forwards it: connections stay open and
 * nothing is lost. Clients see silence, as with a network partition that heals or a
 * frozen server: their calls block until their own time-outs, if any.
 * <li>{@link #setDelay(Duration)} holds each chunk read from either side for the delay
 * before writing it to the other side. Chunks keep their order, so a direction carries at
 * most one chunk per delay: meant for latency, not for bandwidth tests.
 * </ul>
 * Half-closes are forwarded (the end of one direction shuts down the output of the
 * other), so request/response protocols see the same stream as without the proxy.
 * <p>
 * Each connection uses two threads of a cached pool of daemon threads (one per
 * direction), plus one briefly to connect to the target; every thread blocks in socket
 * I/O or in the delay, none spins. At most {@value #MAX_CONNECTIONS} connections are
 * forwarded at a time; further ones are reset. Counters ({@link #acceptedConnections()},
 * {@link #refusedConnections()}, {@link #bytesToTarget()}, {@link #bytesToClient()},
 * {@link #heldChunks()}) tell what went through and what is held.
 * <p>
 * Thread-safe. Close the proxy when done: it closes the port, resets its connections and
 * stops its threads.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public final class TcpProxy implements AutoCloseable {

	/**
	 * Most connections forwarded at the same time.
	 */
	public static final int MAX_CONNECTIONS = 256;

	private static final int BUFFER_SIZE = 16 * 1024;

	private static final int CONNECT_TIMEOUT_MILLIS = 5000;

	private static final long ACCEPT_FAILURE_BACKOFF_MILLIS = 50;

	private static final AtomicInteger instances = new AtomicInteger();

	private final InetSocketAddress target;

	private final ServerSocket serverSocket;

	private final ExecutorService executor;

	private final Object lock = new Object();

	// guarded by lock
	private final Set<Link> links = new HashSet<>();

	// guarded by lock
	private boolean cut;

	// guarded by lock
	private boolean paused;

	// guarded by lock
	private boolean closed;

	private final AtomicInteger held = new AtomicInteger();

	private volatile long delayNanos;

	private final AtomicLong accepted = new AtomicLong();

	private final AtomicLong refused = new AtomicLong();

	private final AtomicLong bytesToTarget = new AtomicLong();

	private final AtomicLong bytesToClient = new AtomicLong();

	private TcpProxy(InetSocketAddress target) throws IOException {
		this.target = target;
		this.serverSocket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
		this.executor = Executors.newCachedThreadPool(daemonThreads("tcp-proxy-" + instances.incrementAndGet() + "-"
				+ this.serverSocket.getLocalPort() + "-to-" + target.getPort()));
		this.executor.execute(this::acceptLoop);
	}

	/**
	 * Start a proxy to the given target. The target is resolved now; it need not be
	 * reachable yet.
	 * @param targetHost the host to forward to
	 * @param targetPort the port to forward to
	 * @return the started proxy, listening on {@link #host()}:{@link #port()}
	 * @throws IOException if no local port can be bound
	 */
	public static TcpProxy start(String targetHost, int targetPort) throws IOException {
		Objects.requireNonNull(targetHost, "'targetHost' must not be null");
		return new TcpProxy(new InetSocketAddress(targetHost, targetPort));
	}

	/**
	 * Return the address clients connect to.
	 * @return the loopback address the proxy listens on, as a literal
	 */
	public String host() {
		return this.serverSocket.getInetAddress().getHostAddress();
	}

	/**
	 * Return the port clients connect to.
	 * @return the ephemeral port the proxy listens on
	 */
	public int port() {
		return this.serverSocket.getLocalPort();
	}

	/**
	 * Cut the network: reset every open connection on both sides and reset new
	 * connections as they arrive, until {@link #restore()}. Returns once every open
	 * connection has been reset.
	 */
	public void cut() {
		List<Link> toReset;
		synchronized (this.lock) {
			this.cut = true;
			toReset = new ArrayList<>(this.links);
			this.links.clear();
			// held chunks of reset connections are dropped
			this.lock.notifyAll();
		}
		for (Link link : toReset) {
			link.reset();
		}
	}

	/**
	 * Restore the network after {@link #cut()}: new connections are forwarded again.
	 * Connections reset by the cut stay closed.
	 */
	public void restore() {
		synchronized (this.lock) {
			this.cut = false;
		}
	}

	/**
	 * Pause the network: hold every chunk read from now on, in either direction and on
	 * every connection (live or new), until {@link #resume()}. Connections stay open.
	 * Returns at once; a chunk already being written is not recalled.
	 */
	public void pause() {
		synchronized (this.lock) {
			this.paused = true;
		}
	}

	/**
	 * Resume the network after {@link #pause()}: held chunks are forwarded, in order, and
	 * new ones are no longer held.
	 */
	public void resume() {
		synchronized (this.lock) {
			this.paused = false;
			this.lock.notifyAll();
		}
	}

	/**
	 * Return whether the network is paused.
	 * @return {@code true} between {@link #pause()} and {@link #resume()}
	 */
	public boolean isPaused() {
		synchronized (this.lock) {
			return this.paused;
		}
	}

	/**
	 * Return the number of chunks held by {@link #pause()} now, at most one per
	 * connection and direction: a positive count means a peer sent something that the
	 * other has not received.
	 * @return the count
	 */
	public int heldChunks() {
		return this.held.get();
	}

	/**
	 * Return whether the network is cut.
	 * @return {@code true} between {@link #cut()} and {@link #restore()}
	 */
	public boolean isCut() {
		synchronized (this.lock) {
			return this.cut;
		}
	}

	/**
	 * Hold every chunk forwarded from now on, in either direction, for the given delay.
	 * @param delay the delay, zero for none
	 */
	public void setDelay(Duration delay) {
		Objects.requireNonNull(delay, "'delay' must not be null");
		if (delay.isNegative()) {
			throw new IllegalArgumentException("'delay' must not be negative");
		}
		this.delayNanos = delay.toNanos();
	}

	/**
	 * Return the number of connections forwarded to the target so far.
	 * @return the count
	 */
	public long acceptedConnections() {
		return this.accepted.get();
	}

	/**
	 * Return the number of connections reset on arrival so far (network cut, target
	 * unreachable or too many connections).
	 * @return the count
	 */
	public long refusedConnections() {
		return this.refused.get();
	}

	/**
	 * Return the number of connections being forwarded now.
	 * @return the count
	 */
	public int openConnections() {
		synchronized (this.lock) {
			return this.links.size();
		}
	}

	/**
	 * Return the number of bytes forwarded from clients to the target so far.
	 * @return the count
	 */
	public long bytesToTarget() {
		return this.bytesToTarget.get();
	}

	/**
	 * Return the number of bytes forwarded from the target to clients so far.
	 * @return the count
	 */
	public long bytesToClient() {
		return this.bytesToClient.get();
	}

	/**
	 * Stop the proxy: close the port, reset every connection and stop the threads.
	 */
	@Override
	public void close() {
		List<Link> toReset;
		synchronized (this.lock) {
			if (this.closed) {
				return;
			}
			this.closed = true;
			toReset = new ArrayList<>(this.links);
			this.links.clear();
			this.lock.notifyAll();
		}
		closeQuietly(this.serverSocket);
		for (Link link : toReset) {
			link.reset();
		}
		this.executor.shutdownNow();
		try {
			// threads are daemons:
			// do not wait long for one stuck connecting to the target
			this.executor.awaitTermination(2, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	@Override
	public String toString() {
		return "TcpProxy[" + host() + ":" + port() + " -> " + this.target + "]";
	}

	private void acceptLoop() {
		while (!isClosed()) {
			Socket client;
			try {
				client = this.serverSocket.accept();
			}
			catch (IOException ex) {
				if (isClosed()) {
					return;
				}
				// e.g. out of file descriptors: back off rather than spin
				if (!sleep(TimeUnit.MILLISECONDS.toNanos(ACCEPT_FAILURE_BACKOFF_MILLIS))) {
					return;
				}
				continue;
			}
			if (!isForwarding()) {
				refuse(client);
				continue;
			}
			try {
				this.executor.execute(() -> connect(client));
			}
			catch (RejectedExecutionException ex) {
				refuse(client);
				return;
			}
		}
	}

	private void connect(Socket client) {
		Socket upstream = new Socket();
		try {
			client.setTcpNoDelay(true);
			upstream.setTcpNoDelay(true);
			upstream.connect(this.target, CONNECT_TIMEOUT_MILLIS);
		}
		catch (IOException ex) {
			closeQuietly(upstream);
			refuse(client);
			return;
		}
		Link link = new Link(client, upstream);
		synchronized (this.lock) {
			// a cut or a close that happened while connecting resets this one too
			if (this.cut || this.closed || this.links.size() >= MAX_CONNECTIONS) {
				link.reset();
				this.refused.incrementAndGet();
				return;
			}
			this.links.add(link);
		}
		this.accepted.incrementAndGet();
		try {
			this.executor.execute(() -> link.pump(client, upstream, this.bytesToTarget));
			this.executor.execute(() -> link.pump(upstream, client, this.bytesToClient));
		}
		catch (RejectedExecutionException ex) {
			remove(link);
			link.reset();
		}
	}

	private boolean isForwarding() {
		synchronized (this.lock) {
			return !this.cut && !this.closed;
		}
	}

	private boolean isClosed() {
		synchronized (this.lock) {
			return this.closed;
		}
	}

	private void remove(Link link) {
		synchronized (this.lock) {
			this.links.remove(link);
			this.lock.notifyAll();
		}
	}

	// false if the link was reset or the proxy closed while the chunk was held
	private boolean awaitResumed(Link link) {
		synchronized (this.lock) {
			if (!this.paused) {
				return true;
			}
			this.held.incrementAndGet();
			try {
				while (this.paused && !this.closed && this.links.contains(link)) {
					this.lock.wait();
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return false;
			}
			finally {
				this.held.decrementAndGet();
			}
			return !this.closed && this.links.contains(link);
		}
	}

	private void refuse(Socket socket) {
		this.refused.incrementAndGet();
		reset(socket);
	}

	// close with SO_LINGER 0: the peer gets an RST instead of an orderly FIN
	private static void reset(Socket socket) {
		try {
			socket.setSoLinger(true, 0);
		}
		catch (IOException ex) {
			// already closed
		}
		closeQuietly(socket);
	}

	private static void closeQuietly(AutoCloseable closeable) {
		try {
			closeable.close();
		}
		catch (Exception ex) {
			// nothing left to do
		}
	}

	// false if interrupted (the proxy is closing)
	private static boolean sleep(long nanos) {
		try {
			TimeUnit.NANOSECONDS.sleep(nanos);
			return true;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

	private static ThreadFactory daemonThreads(String prefix) {
		AtomicInteger count = new AtomicInteger();
		return (runnable) -> {
			Thread thread = new Thread(runnable, prefix + "-" + count.incrementAndGet());
			thread.setDaemon(true);
			return thread;
		};
	}

	/**
	 * One forwarded connection: the client's socket and the socket to the target.
	 */
	private final class Link {

		private final Socket client;

		private final Socket upstream;

		private final AtomicInteger openDirections = new AtomicInteger(2);

		Link(Socket client, Socket upstream) {
			this.client = client;
			this.upstream = upstream;
		}

		void pump(Socket from, Socket to, AtomicLong counter) {
			byte[] buffer = new byte[BUFFER_SIZE];
			try {
				InputStream in = from.getInputStream();
				OutputStream out = to.getOutputStream();
				while (true) {
					int read = in.read(buffer);
					if (read < 0) {
						// forward the half-close
						to.shutdownOutput();
						break;
					}
					long delay = TcpProxy.this.delayNanos;
					if (delay > 0 && !sleep(delay)) {
						throw new IOException("Proxy closing");
					}
					if (!awaitResumed(this)) {
						throw new IOException("Connection reset or proxy closing while paused");
					}
					out.write(buffer, 0, read);
					out.flush();
					counter.addAndGet(read);
				}
			}
			catch (IOException ex) {
				// reset by a peer, by cut() or by close(): take the whole link down
				remove(this);
				reset();
				return;
			}
			if (this.openDirections.decrementAndGet() == 0) {
				remove(this);
				closeQuietly(this.client);
				closeQuietly(this.upstream);
			}
		}

		void reset() {
			TcpProxy.reset(this.client);
			TcpProxy.reset(this.upstream);
		}

	}

}
