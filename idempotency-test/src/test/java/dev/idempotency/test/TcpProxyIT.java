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

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@link TcpProxy} in front of a small echo server: bytes go through both ways, a cut
 * resets live connections and refuses new ones until restored, a pause holds bytes until
 * resumed, a delay adds latency.
 *
 * @author Idempotency contributors
 */
class TcpProxyIT {

	private static final int READ_TIMEOUT_MILLIS = 5000;

	private EchoServer echo;

	private TcpProxy proxy;

	@BeforeEach
	void start() throws IOException {
		this.echo = new EchoServer();
		this.proxy = TcpProxy.start("127.0.0.1", this.echo.port());
	}

	@AfterEach
	void stop() throws IOException {
		this.proxy.close();
		this.echo.close();
	}

	@Test
	void bytesGoThroughBothWays() throws Exception {
		byte[] payload = new byte[300_000];
		new Random(42).nextBytes(payload);
		try (Socket socket = connect()) {
			CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> write(socket, payload));
			byte[] echoed = readExactly(socket.getInputStream(), payload.length);
			writer.get();
			assertThat(echoed).isEqualTo(payload);
		}
		// the proxy counts a chunk after forwarding it: the client may read it first
		long deadline = System.nanoTime() + 2_000_000_000L;
		while ((this.proxy.bytesToTarget() < payload.length || this.proxy.bytesToClient() < payload.length)
				&& System.nanoTime() < deadline) {
			Thread.sleep(10);
		}
		assertThat(this.proxy.bytesToTarget()).isEqualTo(payload.length);
		assertThat(this.proxy.bytesToClient()).isEqualTo(payload.length);
		assertThat(this.proxy.acceptedConnections()).isOne();
		assertThat(this.proxy.refusedConnections()).isZero();
	}

	@Test
	void halfCloseIsForwarded() throws IOException {
		try (Socket socket = connect()) {
			socket.getOutputStream().write("bye".getBytes(StandardCharsets.US_ASCII));
			socket.shutdownOutput();
			// the echo server answers and closes when it reads the end of the stream
			assertThat(readAll(socket.getInputStream())).asString(StandardCharsets.US_ASCII).isEqualTo("bye");
		}
	}

	@Test
	void cutResetsLiveConnectionsAndRefusesNewOnesUntilRestored() throws IOException {
		try (Socket live = connect()) {
			assertThat(roundTrip(live, "before")).isEqualTo("before");
			this.proxy.cut();
			assertThat(this.proxy.isCut()).isTrue();
			assertThat(this.proxy.openConnections()).isZero();
			assertBroken(live);
		}
		int echoConnections = this.echo.connections();
		assertRefused();
		assertThat(this.proxy.refusedConnections()).isOne();
		assertThat(this.echo.connections()).isEqualTo(echoConnections);
		this.proxy.restore();
		try (Socket restored = connect()) {
			assertThat(roundTrip(restored, "after")).isEqualTo("after");
		}
		assertThat(this.proxy.acceptedConnections()).isEqualTo(2);
	}

	@Test
	void pauseHoldsBytesOnLiveAndNewConnectionsUntilResumed() throws Exception {
		try (Socket live = connect()) {
			assertThat(roundTrip(live, "before")).isEqualTo("before");
			// the proxy counts a chunk once it has written it, so the echo may come back
			// before the count is up to date
			awaitBytesToTarget("before".length());
			long forwarded = this.proxy.bytesToTarget();
			this.proxy.pause();
			assertThat(this.proxy.isPaused()).isTrue();
			send(live, "held");
			try (Socket fresh = connect()) {
				send(fresh, "new");
				awaitHeldChunks(2);
				assertThat(this.proxy.bytesToTarget()).isEqualTo(forwarded);
				assertThat(this.proxy.openConnections()).isEqualTo(2);
				this.proxy.resume();
				assertThat(new String(readExactly(live.getInputStream(), 4), StandardCharsets.US_ASCII))
					.isEqualTo("held");
				assertThat(new String(readExactly(fresh.getInputStream(), 3), StandardCharsets.US_ASCII))
					.isEqualTo("new");
			}
			awaitHeldChunks(0);
			assertThat(roundTrip(live, "after")).isEqualTo("after");
		}
	}

	@Test
	void cutDropsChunksHeldByAPause() throws Exception {
		try (Socket live = connect()) {
			this.proxy.pause();
			send(live, "held");
			awaitHeldChunks(1);
			this.proxy.cut();
			assertBroken(live);
			awaitHeldChunks(0);
		}
	}

	@Test
	void delayAddsLatency() throws IOException {
		Duration delay = Duration.ofMillis(150);
		try (Socket socket = connect()) {
			assertThat(roundTrip(socket, "warm-up")).isEqualTo("warm-up");
			this.proxy.setDelay(delay);
			long start = System.nanoTime();
			assertThat(roundTrip(socket, "slow")).isEqualTo("slow");
			Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
			// held once on the way there and once on the way back
			assertThat(elapsed).isGreaterThanOrEqualTo(delay.multipliedBy(2));
			this.proxy.setDelay(Duration.ZERO);
			assertThat(roundTrip(socket, "fast")).isEqualTo("fast");
		}
	}

	@Test
	void closeStopsListening() throws IOException {
		int port = this.proxy.port();
		Socket live = connect();
		this.proxy.close();
		assertBroken(live);
		live.close();
		assertThatExceptionOfType(ConnectException.class).isThrownBy(() -> {
			try (Socket socket = new Socket()) {
				socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), READ_TIMEOUT_MILLIS);
			}
		});
	}

	private Socket connect() throws IOException {
		Socket socket = new Socket();
		socket.connect(new InetSocketAddress(this.proxy.host(), this.proxy.port()), READ_TIMEOUT_MILLIS);
		socket.setSoTimeout(READ_TIMEOUT_MILLIS);
		return socket;
	}

	// the reset can reach the client while it is still connecting, or right after
	private void assertRefused() {
		Socket socket;
		try {
			socket = connect();
		}
		catch (IOException ex) {
			assertThat(ex).isInstanceOf(SocketException.class);
			return;
		}
		try (socket) {
			assertBroken(socket);
		}
		catch (IOException ex) {
			// closing a reset socket
		}
	}

	private static void send(Socket socket, String message) throws IOException {
		socket.getOutputStream().write(message.getBytes(StandardCharsets.US_ASCII));
		socket.getOutputStream().flush();
	}

	private void awaitBytesToTarget(long count) throws InterruptedException {
		long deadline = System.nanoTime() + 5_000_000_000L;
		while (this.proxy.bytesToTarget() < count && System.nanoTime() < deadline) {
			Thread.sleep(10);
		}
		assertThat(this.proxy.bytesToTarget()).isEqualTo(count);
	}

	private void awaitHeldChunks(int count) throws InterruptedException {
		long deadline = System.nanoTime() + 5_000_000_000L;
		while (this.proxy.heldChunks() != count && System.nanoTime() < deadline) {
			Thread.sleep(10);
		}
		assertThat(this.proxy.heldChunks()).isEqualTo(count);
	}

	private static String roundTrip(Socket socket, String message) throws IOException {
		byte[] bytes = message.getBytes(StandardCharsets.US_ASCII);
		socket.getOutputStream().write(bytes);
		socket.getOutputStream().flush();
		return new String(readExactly(socket.getInputStream(), bytes.length), StandardCharsets.US_ASCII);
	}

	// a broken connection ends (EOF) or fails (reset) instead of answering; a read
	// time-out would mean the connection is still up
	private static void assertBroken(Socket socket) {
		byte[] probe = "probe".getBytes(StandardCharsets.US_ASCII);
		int read;
		try {
			socket.getOutputStream().write(probe);
			read = socket.getInputStream().read();
		}
		catch (SocketTimeoutException ex) {
			throw new AssertionError("Connection still up: no EOF nor reset within " + READ_TIMEOUT_MILLIS + " ms", ex);
		}
		catch (IOException ex) {
			return;
		}
		assertThat(read).as("read on a broken connection").isEqualTo(-1);
	}

	private static void write(Socket socket, byte[] payload) {
		try {
			OutputStream out = socket.getOutputStream();
			for (int offset = 0; offset < payload.length; offset += 7000) {
				out.write(payload, offset, Math.min(7000, payload.length - offset));
			}
			out.flush();
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static byte[] readExactly(InputStream in, int length) throws IOException {
		byte[] bytes = in.readNBytes(length);
		assertThat(bytes).as("bytes read before the end of the stream").hasSize(length);
		return bytes;
	}

	private static byte[] readAll(InputStream in) throws IOException {
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		in.transferTo(out);
		return out.toByteArray();
	}

	/**
	 * Writes back every byte it reads, on every connection, until the end of the stream.
	 */
	private static final class EchoServer implements AutoCloseable {

		private final ServerSocket serverSocket;

		private final AtomicInteger connections = new AtomicInteger();

		EchoServer() throws IOException {
			this.serverSocket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
			Thread acceptor = new Thread(this::acceptLoop, "echo-server");
			acceptor.setDaemon(true);
			acceptor.start();
		}

		int port() {
			return this.serverSocket.getLocalPort();
		}

		int connections() {
			return this.connections.get();
		}

		private void acceptLoop() {
			while (!this.serverSocket.isClosed()) {
				try {
					Socket socket = this.serverSocket.accept();
					this.connections.incrementAndGet();
					Thread thread = new Thread(() -> echo(socket), "echo-connection");
					thread.setDaemon(true);
					thread.start();
				}
				catch (IOException ex) {
					return;
				}
			}
		}

		private static void echo(Socket socket) {
			try (socket; InputStream in = socket.getInputStream(); OutputStream out = socket.getOutputStream()) {
				in.transferTo(out);
			}
			catch (IOException ex) {
				// the client or the proxy went away
			}
		}

		@Override
		public void close() throws IOException {
			this.serverSocket.close();
		}

	}

}
