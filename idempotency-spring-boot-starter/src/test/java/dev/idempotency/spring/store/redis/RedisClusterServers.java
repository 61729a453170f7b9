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

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import dev.idempotency.core.IdempotencyKey;
import io.lettuce.core.Range;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * A real Redis Cluster for integration tests: three masters and three replicas, each a
 * {@code redis-server} process (7.0 or later) on a free loopback port, without
 * persistence, in a temporary directory. {@link #start()} returns once every node reports
 * {@code cluster_state:ok}, agrees on the slot owners and every replica's link to its
 * master is up; {@link #close()} kills the processes and deletes the directory.
 * <p>
 * Start one per test class at most (a few seconds), in a static field. The tests fail,
 * never skip, when {@code redis-server} cannot be found.
 *
 * @author Idempotency contributors
 */
public final class RedisClusterServers implements AutoCloseable {

	/**
	 * Environment variable naming the {@code redis-server} executable to use instead of
	 * the one on the {@code PATH}.
	 */
	public static final String REDIS_SERVER = "IDEMPOTENCY_TEST_REDIS_SERVER";

	private static final String HOST = "127.0.0.1";

	private static final int MASTERS = 3;

	private static final Duration STARTUP = Duration.ofSeconds(90);

	private final Path directory;

	private final List<Integer> ports;

	private final Map<Integer, Process> processes = new LinkedHashMap<>();

	private final RedisClient admin;

	private RedisClusterServers(Path directory, List<Integer> ports) {
		this.directory = directory;
		this.ports = List.copyOf(ports);
		this.admin = RedisClient.create();
	}

	/**
	 * Start a cluster of three masters with one replica each.
	 * @return the running cluster
	 */
	public static RedisClusterServers start() {
		String executable = redisServer();
		Path directory;
		try {
			directory = Files.createTempDirectory("idempotency-redis-cluster-");
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		RedisClusterServers cluster = new RedisClusterServers(directory, freePorts(2 * MASTERS));
		try {
			cluster.launch(executable);
			return cluster;
		}
		catch (RuntimeException | Error ex) {
			cluster.close();
			throw ex;
		}
	}

	private static String redisServer() {
		String configured = System.getenv(REDIS_SERVER);
		if (configured != null && !configured.isBlank()) {
			if (!Files.isExecutable(Path.of(configured))) {
				throw new IllegalStateException(REDIS_SERVER + " names '" + configured + "', which is not executable");
			}
			return configured;
		}
		List<Path> candidates = new ArrayList<>();
		String path = System.getenv("PATH");
		if (path != null) {
			for (String entry : path.split(File.pathSeparator)) {
				candidates.add(Path.of(entry, "redis-server"));
			}
		}
		candidates.add(Path.of("/usr/bin/redis-server"));
		candidates.add(Path.of("/usr/local/bin/redis-server"));
		for (Path candidate : candidates) {
			if (Files.isExecutable(candidate)) {
				return candidate.toString();
			}
		}
		throw new IllegalStateException("The Redis Cluster tests need a local redis-server 7.0 or later, which "
				+ "was found neither on the PATH nor in /usr/bin: install it (on Debian or Ubuntu: "
				+ "apt-get install redis-server) or set " + REDIS_SERVER + " to its path");
	}

	private void launch(String executable) {
		for (int port : this.ports) {
			Path dir = this.directory.resolve(Integer.toString(port));
			try {
				Files.createDirectories(dir);
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
			ProcessBuilder builder = new ProcessBuilder(executable, "--port", Integer.toString(port), "--bind", HOST,
					"--dir", dir.toString(), "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
					"--cluster-node-timeout", "5000", "--save", "", "--appendonly", "no", "--protected-mode", "no",
					"--repl-diskless-sync-delay", "0", "--daemonize", "no", "--logfile",
					dir.resolve("redis.log").toString());
			builder.redirectErrorStream(true).redirectOutput(dir.resolve("stdout.log").toFile());
			try {
				this.processes.put(port, builder.start());
			}
			catch (IOException ex) {
				throw new UncheckedIOException("Could not start " + executable, ex);
			}
		}
		for (int port : this.ports) {
			await("redis-server on port " + port + " answering PING", () -> ping(port));
		}
		// three masters, then three replicas: node i + 3 replicates node i
		List<String> masterIds = new ArrayList<>();
		int slotsPerMaster = 16384 / MASTERS;
		for (int i = 0; i < MASTERS; i++) {
			int first = i * slotsPerMaster;
			int last = (i == MASTERS - 1) ? 16383 : first + slotsPerMaster - 1;
			masterIds.add(onNode(this.ports.get(i), (redis) -> {
				redis.clusterAddSlotsRange(Range.create(first, last));
				return redis.clusterMyId();
			}));
		}
		for (int i = 1; i < this.ports.size(); i++) {
			int port = this.ports.get(i);
			onNode(this.ports.get(0), (redis) -> redis.clusterMeet(HOST, port));
		}
		await("every node to know the " + this.ports.size() + " nodes", () -> this.ports.stream()
			.allMatch((port) -> info(port).contains("cluster_known_nodes:" + this.ports.size())));
		for (int i = 0; i < MASTERS; i++) {
			String masterId = masterIds.get(i);
			onNode(this.ports.get(i + MASTERS), (redis) -> redis.clusterReplicate(masterId));
		}
		awaitHealthy();
	}

	/**
	 * Wait until every live node reports {@code cluster_state:ok}, all of them agree on
	 * which node serves every slot, and every replica's link to its master is up.
	 */
	public void awaitHealthy() {
		await("a healthy cluster", this::healthy);
	}

	private boolean healthy() {
		List<Integer> live = livePorts();
		String reference = null;
		int replicas = 0;
		for (int port : live) {
			if (!info(port).contains("cluster_state:ok")) {
				return false;
			}
			List<Node> nodes = nodes(port);
			String owners = nodes.stream()
				.filter(Node::master)
				.filter((node) -> !node.slots().isEmpty() && !node.failed())
				.map((node) -> node.port() + "=" + node.slots())
				.sorted()
				.collect(Collectors.joining(";"));
			if (reference == null) {
				reference = owners;
			}
			else if (!reference.equals(owners)) {
				return false;
			}
			String replication = onNode(port, (redis) -> redis.info("replication"));
			if (replication.contains("role:slave")) {
				if (!replication.contains("master_link_status:up")) {
					return false;
				}
				replicas++;
			}
		}
		// three masters serve the slots, and every other live node replicates one of them
		// (a node told to replicate is a master without slots until it has done so)
		long masters = nodes(live.get(0)).stream()
			.filter((node) -> node.master() && !node.slots().isEmpty() && !node.failed())
			.count();
		return masters == MASTERS && replicas == live.size() - MASTERS;
	}

	/**
	 * Return the ports of the nodes, masters first.
	 * @return the ports
	 */
	public List<Integer> ports() {
		return this.ports;
	}

	/**
	 * Return the nodes in the form of {@code spring.data.redis.cluster.nodes}.
	 * @return {@code host:port} pairs, comma-separated
	 */
	public String nodes() {
		return this.ports.stream().map((port) -> HOST + ":" + port).collect(Collectors.joining(","));
	}

	/**
	 * Return the Redis key under which a store keeps the record of a key.
	 * @param store the store
	 * @param key the idempotency key
	 * @return the Redis key
	 */
	public static byte[] redisKey(RedisIdempotencyStore store, IdempotencyKey key) {
		return store.redisKey(key);
	}

	/**
	 * Return the Spring Data Redis configuration of the cluster.
	 * @return the configuration
	 */
	public RedisClusterConfiguration configuration() {
		return new RedisClusterConfiguration(List.of(nodes().split(",")));
	}

	/**
	 * Return a new, started connection factory for the cluster, whose Lettuce client
	 * refreshes its view of the topology on every {@code MOVED} and {@code ASK} redirect
	 * and every reconnect (adaptive triggers), as Lettuce recommends. The caller destroys
	 * it.
	 * @return the connection factory
	 */
	public LettuceConnectionFactory connectionFactory() {
		return connectionFactory(Duration.ofSeconds(10));
	}

	/**
	 * Return a new, started connection factory for the cluster, as
	 * {@link #connectionFactory()} does, whose commands time out after the given time.
	 * @param commandTimeout the command time-out
	 * @return the connection factory
	 */
	public LettuceConnectionFactory connectionFactory(Duration commandTimeout) {
		ClusterTopologyRefreshOptions refresh = ClusterTopologyRefreshOptions.builder()
			.enableAllAdaptiveRefreshTriggers()
			.adaptiveRefreshTriggersTimeout(Duration.ofMillis(100))
			.build();
		LettuceClientConfiguration client = LettuceClientConfiguration.builder()
			.clientOptions(ClusterClientOptions.builder().topologyRefreshOptions(refresh).build())
			.commandTimeout(commandTimeout)
			.build();
		LettuceConnectionFactory factory = new LettuceConnectionFactory(configuration(), client);
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	/**
	 * Run commands on one node, on a connection of its own.
	 * @param <T> the type of the result
	 * @param port the node's port
	 * @param commands what to run
	 * @return the result
	 */
	public <T> T onNode(int port, Function<RedisCommands<String, String>, T> commands) {
		RedisURI uri = RedisURI.builder().withHost(HOST).withPort(port).withTimeout(Duration.ofSeconds(10)).build();
		try (StatefulRedisConnection<String, String> connection = this.admin.connect(uri)) {
			return commands.apply(connection.sync());
		}
	}

	/**
	 * Return the nodes as one node sees them ({@code CLUSTER NODES}).
	 * @param port the port of the node to ask
	 * @return the nodes
	 */
	public List<Node> nodes(int port) {
		String text = onNode(port, RedisCommands::clusterNodes);
		List<Node> nodes = new ArrayList<>();
		for (String line : text.split("\n")) {
			if (line.isBlank()) {
				continue;
			}
			String[] fields = line.trim().split(" ");
			String address = fields[1].substring(0, fields[1].indexOf('@'));
			int nodePort = Integer.parseInt(address.substring(address.lastIndexOf(':') + 1));
			Set<String> flags = Set.of(fields[2].split(","));
			List<String> slots = new ArrayList<>();
			for (int i = 8; i < fields.length; i++) {
				if (!fields[i].startsWith("[")) {
					slots.add(fields[i]);
				}
			}
			nodes.add(new Node(fields[0], nodePort, flags.contains("master"), "-".equals(fields[3]) ? null : fields[3],
					flags.contains("fail") || flags.contains("fail?"), slots));
		}
		nodes.sort(Comparator.comparingInt(Node::port));
		return nodes;
	}

	/**
	 * Return the port of the master that serves a slot, as that master sees it.
	 * @param slot the slot
	 * @return the port
	 */
	public int masterOf(int slot) {
		for (int port : livePorts()) {
			for (Node node : nodes(port)) {
				if (node.port() == port && node.master() && node.serves(slot)) {
					return port;
				}
			}
		}
		throw new IllegalStateException("No live master serves slot " + slot);
	}

	/**
	 * Return the port of a live replica of a master.
	 * @param masterPort the master's port
	 * @return the replica's port
	 */
	public int replicaOf(int masterPort) {
		// the master learns of its replicas by gossip: right after a start or a failover
		// its view may lag behind the replicas' own
		int[] replica = new int[1];
		await("a live replica in the view of the master on port " + masterPort, () -> {
			List<Node> nodes = nodes(masterPort);
			String masterId = nodes.stream().filter((node) -> node.port() == masterPort).findFirst().orElseThrow().id();
			OptionalInt live = nodes.stream()
				.filter((node) -> masterId.equals(node.masterId()) && !node.failed())
				.mapToInt(Node::port)
				.filter(this::isAlive)
				.findFirst();
			live.ifPresent((port) -> replica[0] = port);
			return live.isPresent();
		});
		return replica[0];
	}

	/**
	 * Return the ID of a node.
	 * @param port the node's port
	 * @return the node ID
	 */
	public String id(int port) {
		return onNode(port, RedisCommands::clusterMyId);
	}

	/**
	 * Kill a node's process at once ({@code SIGKILL}), as a crash would.
	 * @param port the node's port
	 */
	public void kill(int port) {
		Process process = this.processes.get(port);
		if (process != null) {
			process.destroyForcibly();
			try {
				process.waitFor(30, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
	}

	/**
	 * Stop a node's process ({@code SIGSTOP}) until {@link #resume}: it neither answers
	 * nor reads what is sent to it.
	 * @param port the node's port
	 */
	public void pause(int port) {
		signal(port, "STOP");
	}

	/**
	 * Let a node {@link #pause paused} run again ({@code SIGCONT}).
	 * @param port the node's port
	 */
	public void resume(int port) {
		signal(port, "CONT");
	}

	private void signal(int port, String signal) {
		Process process = this.processes.get(port);
		if (process == null) {
			throw new IllegalArgumentException("No node on port " + port);
		}
		try {
			Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).inheritIO().start();
			if (!kill.waitFor(30, TimeUnit.SECONDS) || kill.exitValue() != 0) {
				throw new IllegalStateException("Could not send SIG" + signal + " to the node on port " + port);
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private boolean isAlive(int port) {
		Process process = this.processes.get(port);
		return process != null && process.isAlive();
	}

	private List<Integer> livePorts() {
		return this.ports.stream().filter(this::isAlive).toList();
	}

	/**
	 * Poll a condition until it holds, every 50 ms for at most a minute and a half: a
	 * busy machine may be slow, but a cluster that does not settle by then never will.
	 * @param what what is awaited, for the failure message
	 * @param condition the condition; an exception counts as not yet
	 */
	public static void await(String what, BooleanSupplier condition) {
		long deadline = System.nanoTime() + STARTUP.toNanos();
		RuntimeException last = null;
		while (System.nanoTime() < deadline) {
			try {
				if (condition.getAsBoolean()) {
					return;
				}
			}
			catch (RuntimeException ex) {
				last = ex;
			}
			try {
				Thread.sleep(50);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException("Interrupted waiting for " + what, ex);
			}
		}
		throw new IllegalStateException("Timed out after " + STARTUP.toSeconds() + " s waiting for " + what, last);
	}

	private String info(int port) {
		return onNode(port, RedisCommands::clusterInfo);
	}

	private static boolean ping(int port) {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress(HOST, port), 1000);
			socket.setSoTimeout(1000);
			OutputStream out = socket.getOutputStream();
			out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
			out.flush();
			InputStream in = socket.getInputStream();
			byte[] reply = new byte[7];
			int read = in.readNBytes(reply, 0, 7);
			return read == 7 && new String(reply, StandardCharsets.US_ASCII).equals("+PONG\r\n");
		}
		catch (IOException ex) {
			return false;
		}
	}

	// a node needs its port and its cluster bus port (port + 10000) free
	private static List<Integer> freePorts(int count) {
		List<Integer> ports = new ArrayList<>();
		Set<Integer> seen = new HashSet<>();
		int attempts = 0;
		while (ports.size() < count) {
			if (++attempts > 1000) {
				throw new IllegalStateException("Could not find " + count + " free loopback ports");
			}
			int port = freePort(0);
			if (port <= 0 || port > 55535 || !seen.add(port) || seen.contains(port + 10000)
					|| freePort(port + 10000) < 0) {
				continue;
			}
			seen.add(port + 10000);
			ports.add(port);
		}
		return ports;
	}

	private static int freePort(int port) {
		try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getByName(HOST))) {
			socket.setReuseAddress(true);
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			return -1;
		}
	}

	/**
	 * Kill every node and delete the directory.
	 */
	@Override
	public void close() {
		for (Process process : this.processes.values()) {
			process.destroyForcibly();
		}
		for (Process process : this.processes.values()) {
			try {
				process.waitFor(30, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
		this.admin.shutdown(Duration.ZERO, Duration.ofSeconds(2));
		try (Stream<Path> paths = Files.walk(this.directory)) {
			paths.sorted(Comparator.reverseOrder()).forEach((path) -> path.toFile().delete());
		}
		catch (IOException ex) {
			// best effort: the directory is in the temporary directory
		}
	}

	/**
	 * A node as {@code CLUSTER NODES} shows it.
	 *
	 * @param id the node ID
	 * @param port the port
	 * @param master whether it is a master
	 * @param masterId the ID of its master, {@code null} for a master
	 * @param failed whether it is flagged as failing
	 * @param slots its slot ranges, such as {@code 0-5460}
	 */
	public record Node(String id, int port, boolean master, @Nullable String masterId, boolean failed,
			List<String> slots) {

		/**
		 * Whether the node serves a slot.
		 * @param slot the slot
		 * @return {@code true} if one of its ranges holds it
		 */
		public boolean serves(int slot) {
			for (String range : this.slots) {
				int dash = range.indexOf('-');
				int first = Integer.parseInt((dash < 0) ? range : range.substring(0, dash));
				int last = Integer.parseInt((dash < 0) ? range : range.substring(dash + 1));
				if (slot >= first && slot <= last) {
					return true;
				}
			}
			return false;
		}

	}

}
