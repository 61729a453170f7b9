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

package dev.idempotency.spring.client;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import org.jspecify.annotations.Nullable;

/**
 * Real HTTP server on an ephemeral loopback port whose answers are scripted: it fails in
 * chosen ways before it succeeds. It records every request it receives and counts the
 * successful executions of its "handler".
 *
 * @author Idempotency contributors
 */
final class RetryTestServer implements AutoCloseable {

	static {
		// without it, small responses wait for
		// delayed acknowledgements (about 40 ms each)
		System.setProperty("sun.net.httpserver.nodelay", "true");
	}

	private final HttpServer server;

	private final ExecutorService executor = Executors.newCachedThreadPool();

	private final List<Received> received = Collections.synchronizedList(new ArrayList<>());

	private final AtomicInteger executions = new AtomicInteger();

	static final String IN_PROGRESS_TYPE = "https://idempotency.dev/problems/request-in-progress";

	private volatile Function<Received, Reply> plan = (request) -> success();

	private volatile Runnable onRequest = () -> {
	};

	private RetryTestServer(HttpServer server) {
		this.server = server;
		this.server.setExecutor(this.executor);
		this.server.createContext("/", this::handle);
		this.server.start();
	}

	static RetryTestServer start() {
		try {
			return new RetryTestServer(
					HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0));
		}
		catch (IOException ex) {
			throw new IllegalStateException("Cannot start the test HTTP server on a loopback port", ex);
		}
	}

	URI uri(String path) {
		return URI.create("http://127.0.0.1:" + this.server.getAddress().getPort() + path);
	}

	/**
	 * Answer the next requests with the given replies, in order, and succeed after them.
	 * @param replies the replies
	 */
	void replyInOrder(Reply... replies) {
		Queue<Reply> queue = new ConcurrentLinkedQueue<>(List.of(replies));
		this.plan = (request) -> {
			Reply next = queue.poll();
			return (next != null) ? next : success();
		};
	}

	/**
	 * Answer every request with the given reply.
	 * @param reply the reply
	 */
	void replyAlways(Reply reply) {
		this.plan = (request) -> reply;
	}

	void plan(Function<Received, Reply> plan) {
		this.plan = plan;
	}

	/**
	 * Run an action at each request, before it is answered.
	 * @param onRequest the action
	 */
	void onRequest(Runnable onRequest) {
		this.onRequest = onRequest;
	}

	List<Received> received() {
		synchronized (this.received) {
			return List.copyOf(this.received);
		}
	}

	int executions() {
		return this.executions.get();
	}

	/**
	 * The successful execution: counted, and answered 201 with a body naming it.
	 * @return the reply
	 */
	Reply success() {
		return (exchange) -> {
			int execution = this.executions.incrementAndGet();
			send(exchange, 201, "created " + execution);
		};
	}

	/**
	 * Close the connection without sending any response.
	 * @return the reply
	 */
	static Reply reset() {
		return HttpExchange::close;
	}

	/**
	 * Stall for a while, then close the connection without sending any response.
	 * @param stall how long to stall
	 * @return the reply
	 */
	static Reply stall(Duration stall) {
		return (exchange) -> {
			try {
				Thread.sleep(stall.toMillis());
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			exchange.close();
		};
	}

	/**
	 * Answer with a status, a small body and the given headers.
	 * @param status the status
	 * @param headers header names and values, alternating
	 * @return the reply
	 */
	static Reply status(int status, String... headers) {
		return (exchange) -> {
			for (int i = 0; i < headers.length; i += 2) {
				exchange.getResponseHeaders().add(headers[i], headers[i + 1]);
			}
			send(exchange, status, "status " + status);
		};
	}

	/**
	 * Answer with a problem detail of the given type and the given headers.
	 * @param status the status
	 * @param type the problem's type URI
	 * @param headers header names and values, alternating
	 * @return the reply
	 */
	static Reply problem(int status, String type, String... headers) {
		return (exchange) -> {
			for (int i = 0; i < headers.length; i += 2) {
				exchange.getResponseHeaders().add(headers[i], headers[i + 1]);
			}
			send(exchange, status, problemBody(status, type), "application/problem+json");
		};
	}

	/**
	 * Answer 409 with the {@code request-in-progress} problem and the given headers.
	 * @param headers header names and values, alternating
	 * @return the reply
	 */
	static Reply inProgress(String... headers) {
		return problem(409, IN_PROGRESS_TYPE, headers);
	}

	static String problemBody(int status, String type) {
		return "{\"type\":\"" + type + "\",\"title\":\"Problem\",\"status\":" + status + "}";
	}

	private static void send(HttpExchange exchange, int status, String body) throws IOException {
		send(exchange, status, body, "text/plain");
	}

	private static void send(HttpExchange exchange, int status, String body, String contentType) throws IOException {
		byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
		exchange.getResponseHeaders().set("Content-Type", contentType);
		exchange.sendResponseHeaders(status, bytes.length);
		exchange.getResponseBody().write(bytes);
		exchange.close();
	}

	private void handle(HttpExchange exchange) throws IOException {
		byte[] body = exchange.getRequestBody().readAllBytes();
		Received request = new Received(exchange.getRequestMethod(),
				exchange.getRequestHeaders().get(IdempotentRetryInterceptor.DEFAULT_KEY_HEADER),
				new String(body, StandardCharsets.UTF_8));
		this.received.add(request);
		this.onRequest.run();
		this.plan.apply(request).send(exchange);
	}

	@Override
	public void close() {
		this.server.stop(0);
		this.executor.shutdownNow();
		try {
			this.executor.awaitTermination(5, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/**
	 * A request as the server received it.
	 *
	 * @param method the method
	 * @param keys every value of the idempotency key header, or {@code null} if absent
	 * @param body the body
	 */
	record Received(String method, @Nullable List<String> keys, String body) {

		@Nullable String key() {
			return (this.keys != null) ? this.keys.get(0) : null;
		}

	}

	/**
	 * How the server answers one request.
	 */
	@FunctionalInterface
	interface Reply {

		void send(HttpExchange exchange) throws IOException;

	}

}
