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

package dev.idempotency.spring.store.redis;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;

import io.lettuce.core.RedisCredentials;
import io.lettuce.core.RedisURI;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * Counts the commands one client connection sends to Redis, with {@code MONITOR} on a
 * plain socket of its own.
 * <p>
 * Global counters ({@code INFO commandstats}) cannot tell this client's commands from
 * those of other processes sharing the server. {@code MONITOR} shows every command with
 * the address of the connection that sent it, in execution order, so the commands of an
 * operation are the lines from the address of the connection that also sent two
 * {@code ECHO} markers around it. Commands that scripts run show up as coming from
 * {@code lua} and are not counted: they cost no round trip.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public final class RedisMonitor implements AutoCloseable {

	private final Socket socket;

	private final BufferedReader reader;

	private RedisMonitor(Socket socket) throws IOException {
		this.socket = socket;
		this.reader = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.ISO_8859_1));
	}

	/**
	 * The command a claim of {@link RedisIdempotencyStore} sends to this server: a
	 * {@code SET NX GET}, or, on a server before Redis 7.0 (the embedded Redis 6.2 that
	 * the tests fall back to), the claim script.
	 * @param connectionFactory a connection to the server
	 * @return {@code set} or {@code evalsha}
	 */
	public static String claimCommand(RedisConnectionFactory connectionFactory) {
		try (RedisConnection connection = connectionFactory.getConnection()) {
			String version = connection.serverCommands().info("server").getProperty("redis_version");
			int major = Integer.parseInt(version.substring(0, version.indexOf('.')));
			return (major >= 7) ? "set" : "evalsha";
		}
	}

	/**
	 * Open a monitor connection to the given server.
	 * @param uri the server
	 * @return the monitor, to be closed
	 * @throws IOException if the connection fails
	 */
	public static RedisMonitor start(RedisURI uri) throws IOException {
		Socket socket = new Socket();
		socket.connect(new InetSocketAddress(uri.getHost(), uri.getPort()), 5000);
		socket.setSoTimeout(10_000);
		RedisMonitor monitor = new RedisMonitor(socket);
		RedisCredentials credentials = uri.getCredentialsProvider().resolveCredentials().block();
		if (credentials != null && credentials.hasPassword()) {
			String user = credentials.hasUsername() ? credentials.getUsername() : "default";
			monitor.send("AUTH", user, new String(credentials.getPassword()));
			monitor.expectOk();
		}
		monitor.send("MONITOR");
		monitor.expectOk();
		return monitor;
	}

	/**
	 * Run an action and return the names of the commands that the connection factory's
	 * connection sent to Redis while it ran. The factory must share one native connection
	 * between its {@link RedisConnection}s, as Lettuce does by default.
	 * @param connectionFactory the factory the action uses
	 * @param action the action
	 * @return the lower-case command names, in order
	 * @throws IOException if the monitor connection fails
	 */
	public List<String> commandsOf(RedisConnectionFactory connectionFactory, Runnable action) throws IOException {
		String start = "start-" + UUID.randomUUID();
		String end = "end-" + UUID.randomUUID();
		echo(connectionFactory, start);
		action.run();
		echo(connectionFactory, end);
		String client = null;
		List<String> commands = new ArrayList<>();
		while (true) {
			String line = this.reader.readLine();
			if (line == null) {
				throw new IOException("MONITOR connection closed");
			}
			int open = line.indexOf('[');
			int close = line.indexOf(']', open + 1);
			if (!line.startsWith("+") || open < 0 || close < 0) {
				continue;
			}
			// "[db address]"
			String source = line.substring(line.indexOf(' ', open) + 1, close);
			String command = line.substring(close + 1).trim();
			if (client == null) {
				if (command.contains(start)) {
					client = source;
				}
				continue;
			}
			if (!source.equals(client)) {
				continue;
			}
			if (command.contains(end)) {
				return commands;
			}
			commands.add(name(command));
		}
	}

	private static String name(String command) {
		// "evalsha" "a1b2..." "1" ...
		int first = command.indexOf('"');
		int second = command.indexOf('"', first + 1);
		return command.substring(first + 1, second).toLowerCase(Locale.ROOT);
	}

	private static void echo(RedisConnectionFactory connectionFactory, String marker) {
		try (RedisConnection connection = connectionFactory.getConnection()) {
			connection.echo(RedisTestServer.bytes(marker));
		}
	}

	private void send(String... arguments) throws IOException {
		StringBuilder command = new StringBuilder("*").append(arguments.length).append("\r\n");
		for (String argument : arguments) {
			byte[] bytes = argument.getBytes(StandardCharsets.UTF_8);
			command.append('$').append(bytes.length).append("\r\n").append(argument).append("\r\n");
		}
		OutputStream out = this.socket.getOutputStream();
		out.write(command.toString().getBytes(StandardCharsets.UTF_8));
		out.flush();
	}

	private void expectOk() throws IOException {
		String reply = this.reader.readLine();
		if (!"+OK".equals(reply)) {
			throw new IOException("Unexpected Redis reply: " + reply);
		}
	}

	@Override
	public void close() throws IOException {
		this.socket.close();
	}

}
