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

package dev.idempotency.sample.payments;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.sql.DataSource;

import dev.idempotency.test.TcpProxy;
import dev.idempotency.test.servers.TestServers;

import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * The soak test's load and fault driver (run by {@code src/soak/soak.sh}, not by the
 * build): starts several instances of the packaged sample in child JVMs, each reaching
 * Redis and PostgreSQL through its own {@link TcpProxy}, drives a mixed load (new keys,
 * retries, concurrent duplicates on several instances, reused keys with another body,
 * gateway failures and their retries) while injecting faults (Redis cut on one or all
 * instances, Redis slowed down, PostgreSQL cut, Redis or PostgreSQL paused with their
 * connections held open, an instance killed with {@code SIGKILL} and restarted), then
 * settles every unfinished key with retries and checks the database for double executions
 * and the client log for mismatched replays.
 * <p>
 * Arguments ({@code --name=value}): {@code duration} (10m), {@code instances} (3),
 * {@code concurrency} (8), {@code faults} (true), {@code fault-interval} (20s),
 * {@code kills} (true), {@code lock-timeout} (2s), {@code start-timeout} (5m),
 * {@code seed} (random), {@code output} ({@code target/soak}). Exits with status 1 when
 * it found an anomaly.
 *
 * @author Idempotency contributors
 */
public final class SoakDriver {

	private static final Pattern ID = Pattern.compile("\"id\":\"([0-9a-f-]{36})\"");

	private static final List<String> USERS = List.of("alice", "bob");

	private static final long INITIAL_BALANCE = 1_000_000_000_000L;

	private static final Duration FAULT_GRACE = Duration.ofSeconds(15);

	private final Map<String, String> options;

	private final Duration duration;

	private final int concurrency;

	private final boolean faults;

	private final boolean kills;

	private final Duration faultInterval;

	private final long seed;

	private final Path output;

	private final String schema = "soak_" + Long.toHexString(System.nanoTime());

	private final String runId = Long.toHexString(System.currentTimeMillis());

	private final List<Node> nodes = new ArrayList<>();

	private final Map<String, List<String>> accounts = new HashMap<>();

	private final Map<String, Payment> payments = new ConcurrentHashMap<>();

	private final List<String> keys = new CopyOnWriteArrayList<>();

	private final List<String> completedKeys = new CopyOnWriteArrayList<>();

	private final Map<String, AtomicLong> operations = new ConcurrentHashMap<>();

	private final Map<String, AtomicLong> statuses = new ConcurrentHashMap<>();

	private final Map<String, AtomicLong> faultCounts = new ConcurrentHashMap<>();

	private final List<long[]> faultWindows = new CopyOnWriteArrayList<>();

	private final List<String> anomalies = new CopyOnWriteArrayList<>();

	private final AtomicLong keyCounter = new AtomicLong();

	private final AtomicLong requests = new AtomicLong();

	private PrintWriter clientLog;

	private DataSource dataSource;

	private JdbcClient jdbc;

	private volatile boolean running = true;

	private SoakDriver(Map<String, String> options) {
		this.options = options;
		this.duration = duration(option("duration", "10m"));
		this.concurrency = Integer.parseInt(option("concurrency", "8"));
		this.faults = Boolean.parseBoolean(option("faults", "true"));
		this.kills = Boolean.parseBoolean(option("kills", "true"));
		this.faultInterval = duration(option("fault-interval", "20s"));
		this.seed = Long.parseLong(option("seed", String.valueOf(System.nanoTime())));
		this.output = Path.of(option("output", SampleInstance.jar().getParent().resolve("soak").toString()));
	}

	public static void main(String[] args) throws Exception {
		Map<String, String> options = new LinkedHashMap<>();
		for (String arg : args) {
			String[] parts = arg.replaceFirst("^--", "").split("=", 2);
			options.put(parts[0], (parts.length > 1) ? parts[1] : "true");
		}
		int anomalies = new SoakDriver(options).run();
		System.exit((anomalies > 0) ? 1 : 0);
	}

	private int run() throws Exception {
		Files.createDirectories(this.output);
		this.clientLog = new PrintWriter(Files.newBufferedWriter(this.output.resolve("client.log")), true);
		this.dataSource = SampleInstance.schemaDataSource(this.schema);
		this.jdbc = JdbcClient.create(this.dataSource);
		int instances = Integer.parseInt(option("instances", "3"));
		log("Starting %d instances (schema %s, seed %d, logs in %s)", instances, this.schema, this.seed, this.output);
		for (int i = 0; i < instances; i++) {
			this.nodes.add(new Node(i));
		}
		this.nodes.forEach(Node::launch);
		this.nodes.forEach(Node::awaitStarted);
		try {
			openAccounts();
			long started = System.nanoTime();
			log("Load for %s, concurrency %d, faults %s, kills %s", this.duration, this.concurrency, this.faults,
					this.kills);
			ExecutorService workers = Executors.newFixedThreadPool(this.concurrency + 1);
			List<Future<?>> futures = new ArrayList<>();
			for (int i = 0; i < this.concurrency; i++) {
				Random random = new Random(this.seed + i);
				futures.add(workers.submit(() -> work(random)));
			}
			if (this.faults) {
				Random random = new Random(this.seed - 1);
				futures.add(workers.submit(() -> injectFaults(random)));
			}
			long end = started + this.duration.toNanos();
			while (System.nanoTime() < end) {
				Thread.sleep(Math.min(30_000, Math.max(1, (end - System.nanoTime()) / 1_000_000)));
				log("%s elapsed, %d requests, statuses %s",
						Duration.ofNanos(System.nanoTime() - started).toSeconds() + "s", this.requests.get(),
						new TreeMap<>(this.statuses));
			}
			this.running = false;
			for (Future<?> future : futures) {
				future.get(5, TimeUnit.MINUTES);
			}
			workers.shutdown();
			Duration elapsed = Duration.ofNanos(System.nanoTime() - started);
			restoreAll();
			int settled = settle();
			checkClientLog();
			String database = checkDatabase();
			summary(elapsed, settled, database);
			return this.anomalies.size();
		}
		finally {
			this.nodes.forEach(Node::close);
			this.clientLog.close();
			TestServers.Postgres.dropSchema(this.dataSource, this.schema);
		}
	}

	private void openAccounts() {
		Node node = this.nodes.get(0);
		for (String user : USERS) {
			List<String> ids = new ArrayList<>();
			for (int i = 0; i < 3; i++) {
				HttpResponse<byte[]> response = node.client.post(user, "/accounts",
						"{\"currency\":\"EUR\",\"initialBalance\":" + INITIAL_BALANCE + "}", "Idempotency-Key",
						"soak-account-" + UUID.randomUUID());
				if (response.statusCode() != 201) {
					throw new IllegalStateException(
							"Could not open an account: " + response.statusCode() + " " + SampleClient.text(response));
				}
				ids.add(id(SampleClient.text(response)));
			}
			this.accounts.put(user, ids);
		}
	}

	// ---- load

	private void work(Random random) {
		while (this.running) {
			int dice = random.nextInt(100);
			if (dice < 45) {
				count(this.operations, "new");
				Payment payment = newPayment(random);
				send(random, payment, payment.json(), delayHeaders(random));
			}
			else if (dice < 65 && !this.keys.isEmpty()) {
				count(this.operations, "retry");
				Payment payment = this.payments.get(this.keys.get(random.nextInt(this.keys.size())));
				send(random, payment, payment.json());
			}
			else if (dice < 80) {
				count(this.operations, "concurrent-duplicates");
				duplicates(random);
			}
			else if (dice < 90 && !this.completedKeys.isEmpty()) {
				count(this.operations, "reused-key");
				Payment payment = this.payments.get(this.completedKeys.get(random.nextInt(this.completedKeys.size())));
				Outcome outcome = send(random, payment, payment.otherJson());
				if (outcome.status != 422 && outcome.status != 503 && outcome.status >= 0
						&& !(outcome.status == 500 && explainedByFault(outcome.at))) {
					anomaly("key %s reused with another body: %d %s (expected 422)", payment.key, outcome.status,
							outcome.text());
				}
			}
			else {
				count(this.operations, "gateway-failure-then-retry");
				Payment payment = newPayment(random);
				send(random, payment, payment.json(), "Demo-Gateway-Fault", "503");
				send(random, payment, payment.json());
			}
		}
	}

	private void duplicates(Random random) {
		Payment payment = newPayment(random);
		int copies = 2 + random.nextInt(3);
		List<Thread> threads = new ArrayList<>();
		for (int i = 0; i < copies; i++) {
			Random own = new Random(random.nextLong());
			Thread thread = new Thread(() -> send(own, payment, payment.json(), "Demo-Gateway-Delay-Ms", "200"));
			thread.start();
			threads.add(thread);
		}
		for (Thread thread : threads) {
			try {
				thread.join();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
		}
	}

	private static String[] delayHeaders(Random random) {
		return (random.nextInt(10) < 3) ? new String[] { "Demo-Gateway-Delay-Ms", String.valueOf(random.nextInt(500)) }
				: new String[0];
	}

	private Payment newPayment(Random random) {
		String user = USERS.get(random.nextInt(USERS.size()));
		List<String> ids = this.accounts.get(user);
		Payment payment = new Payment(user, "soak-" + this.runId + "-" + this.keyCounter.incrementAndGet(),
				ids.get(random.nextInt(ids.size())), 1 + random.nextInt(10_000));
		this.payments.put(payment.key, payment);
		this.keys.add(payment.key);
		return payment;
	}

	private Outcome send(Random random, Payment payment, String json, String... headers) {
		List<Node> live = this.nodes.stream().filter((node) -> node.client != null).toList();
		Node node = live.isEmpty() ? this.nodes.get(0) : live.get(random.nextInt(live.size()));
		return send(node, payment, json, headers);
	}

	private Outcome send(Node node, Payment payment, String json, String... headers) {
		String[] all = Arrays.copyOf(headers, headers.length + 2);
		all[headers.length] = "Idempotency-Key";
		all[headers.length + 1] = payment.key;
		Outcome outcome;
		SampleClient client = node.client;
		try {
			if (client == null) {
				throw new UncheckedIOException(new IOException("instance " + node.index + " is down"));
			}
			HttpResponse<byte[]> response = client.post(payment.user, "/payments", json, all);
			outcome = new Outcome(System.nanoTime(), node.index, response.statusCode(),
					response.headers().firstValue("Idempotent-Replayed").isPresent(), response.body(),
					json.equals(payment.json()));
		}
		catch (UncheckedIOException ex) {
			outcome = new Outcome(System.nanoTime(), node.index, -1, false, String.valueOf(ex.getCause()).getBytes(),
					json.equals(payment.json()));
		}
		this.requests.incrementAndGet();
		count(this.statuses, (outcome.status >= 0) ? String.valueOf(outcome.status) : "io-error");
		payment.outcomes.add(outcome);
		if (outcome.status == 201 && outcome.sameBody) {
			this.completedKeys.add(payment.key);
		}
		if (outcome.status == 500 && !explainedByFault(outcome.at)) {
			anomaly("500 outside any fault window for key %s on instance %d: %s", payment.key, node.index,
					outcome.text());
		}
		this.clientLog.printf("%s node=%d user=%s key=%s status=%d replayed=%s body-sha256=%s %s%n", Instant.now(),
				node.index, payment.user, payment.key, outcome.status, outcome.replayed, sha256(outcome.body),
				abbreviate(outcome.text()));
		return outcome;
	}

	// ---- faults

	private void injectFaults(Random random) {
		while (this.running) {
			pause(this.faultInterval);
			if (!this.running) {
				return;
			}
			int dice = random.nextInt(this.kills ? 7 : 6);
			Duration length = Duration.ofMillis(2000 + random.nextInt(4000));
			Node node = this.nodes.get(random.nextInt(this.nodes.size()));
			long start = System.nanoTime();
			if (dice == 0) {
				fault("redis-cut", "Redis cut for instance %d for %s", node.index, length);
				node.redis.cut();
				pause(length);
				node.redis.restore();
			}
			else if (dice == 1) {
				fault("redis-cut-all", "Redis cut for every instance for %s", length);
				this.nodes.forEach((each) -> each.redis.cut());
				pause(length);
				this.nodes.forEach((each) -> each.redis.restore());
			}
			else if (dice == 2) {
				fault("redis-slow", "Redis slowed down by 300 ms for instance %d for %s", node.index, length);
				node.redis.setDelay(Duration.ofMillis(300));
				pause(length);
				node.redis.setDelay(Duration.ZERO);
			}
			else if (dice == 3) {
				fault("postgres-cut", "PostgreSQL cut for instance %d for %s", node.index, length);
				node.postgres.cut();
				pause(length);
				node.postgres.restore();
			}
			else if (dice == 4) {
				// a hang, not a refusal: connections stay open and nothing comes back
				fault("redis-pause", "Redis paused (connections held open) for instance %d for %s", node.index, length);
				node.redis.pause();
				pause(length);
				node.redis.resume();
			}
			else if (dice == 5) {
				fault("postgres-pause", "PostgreSQL paused (connections held open) for instance %d for %s", node.index,
						length);
				node.postgres.pause();
				pause(length);
				node.postgres.resume();
			}
			else {
				fault("kill", "SIGKILL to instance %d, then a restart", node.index);
				node.killAndRestart();
			}
			this.faultWindows.add(new long[] { start, System.nanoTime() });
		}
	}

	private void fault(String type, String format, Object... args) {
		count(this.faultCounts, type);
		log("Fault: " + format, args);
	}

	private boolean explainedByFault(long at) {
		for (long[] window : this.faultWindows) {
			if (at >= window[0] && at <= window[1] + FAULT_GRACE.toNanos()) {
				return true;
			}
		}
		// a fault still under way has no window yet
		return this.faultCounts.values().stream().mapToLong(AtomicLong::get).sum() > this.faultWindows.size();
	}

	private void restoreAll() {
		for (Node node : this.nodes) {
			node.redis.restore();
			node.redis.setDelay(Duration.ZERO);
			node.postgres.restore();
		}
	}

	// ---- checks

	// Every key without a final answer (201) is retried until it has one: a key left
	// by a killed instance waits for its lease to lapse, then the retry resumes it.
	private int settle() {
		int settled = 0;
		for (Payment payment : this.payments.values()) {
			boolean done = payment.outcomes.stream().anyMatch((outcome) -> outcome.status == 201 && outcome.sameBody);
			if (done) {
				continue;
			}
			settled++;
			long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
			Outcome outcome = send(this.nodes.get(settled % this.nodes.size()), payment, payment.json());
			while (outcome.status != 201 && System.nanoTime() < deadline) {
				pause(Duration.ofMillis(250));
				outcome = send(this.nodes.get(settled % this.nodes.size()), payment, payment.json());
			}
			if (outcome.status != 201) {
				anomaly("key %s could not be settled: %d %s", payment.key, outcome.status, outcome.text());
			}
		}
		return settled;
	}

	private void checkClientLog() {
		for (Payment payment : this.payments.values()) {
			List<Outcome> created = payment.outcomes.stream()
				.filter((outcome) -> outcome.status == 201 && outcome.sameBody)
				.toList();
			long fresh = created.stream().filter((outcome) -> !outcome.replayed).count();
			if (fresh > 1) {
				anomaly("double execution: key %s answered %d times by the handler (not replayed)", payment.key, fresh);
			}
			Set<String> ids = new HashSet<>();
			created.forEach((outcome) -> ids.add(id(outcome.text())));
			if (ids.size() > 1) {
				anomaly("mismatched replay: key %s answered with payments %s", payment.key, ids);
			}
			if (!created.isEmpty()) {
				byte[] first = created.get(0).body;
				for (Outcome outcome : created) {
					if (outcome.replayed && !Arrays.equals(first, outcome.body)) {
						anomaly("mismatched replay: key %s replayed other bytes: %s vs %s", payment.key,
								new String(first, StandardCharsets.UTF_8), outcome.text());
					}
				}
				payment.answeredId = ids.iterator().next();
				if (!created.get(0).text().contains("\"amount\":" + payment.amount + ",")) {
					anomaly("mismatched replay: key %s answered another amount: %s", payment.key,
							created.get(0).text());
				}
			}
		}
	}

	private String checkDatabase() {
		List<Map<String, Object>> rows = this.jdbc
			.sql("SELECT p.owner, p.idempotency_key, p.id, p.status, p.gateway_charge, p.amount, "
					+ "(SELECT count(*) FROM gateway_charges c WHERE c.id = p.gateway_charge) AS charges "
					+ "FROM payments p")
			.query()
			.listOfRows();
		Map<String, Integer> perKey = new HashMap<>();
		Set<String> chargeKeys = new HashSet<>();
		int pending = 0;
		for (Map<String, Object> row : rows) {
			String owner = (String) row.get("owner");
			String key = (String) row.get("idempotency_key");
			perKey.merge(owner + " " + key, 1, Integer::sum);
			chargeKeys.add(PaymentService.chargeKey(owner, key));
			if ("PENDING".equals(row.get("status"))) {
				pending++;
				anomaly("payment for key %s still PENDING after the settling retries", key);
			}
			else if (((Number) row.get("charges")).longValue() != 1) {
				anomaly("payment for key %s has %s gateway charges", key, row.get("charges"));
			}
			Payment payment = this.payments.get(key);
			if (payment != null && payment.answeredId != null && !payment.answeredId.equals(row.get("id").toString())) {
				anomaly("key %s was answered with payment %s but the database holds %s", key, payment.answeredId,
						row.get("id"));
			}
		}
		perKey.forEach((key, count) -> {
			if (count > 1) {
				anomaly("double execution: %d payments for %s", count, key);
			}
		});
		List<String> charges = this.jdbc.sql("SELECT charge_key FROM gateway_charges").query(String.class).list();
		long orphans = charges.stream().filter((charge) -> !chargeKeys.contains(charge)).count();
		if (orphans > 0) {
			anomaly("%d gateway charges without a payment", orphans);
		}
		List<Map<String, Object>> balances = this.jdbc
			.sql("SELECT a.id, a.balance, coalesce((SELECT sum(amount) FROM payments p WHERE p.account_id = a.id), 0)"
					+ " AS paid FROM accounts a")
			.query()
			.listOfRows();
		for (Map<String, Object> row : balances) {
			long balance = ((Number) row.get("balance")).longValue();
			long paid = ((Number) row.get("paid")).longValue();
			if (balance != INITIAL_BALANCE - paid) {
				anomaly("account %s: balance %d, but %d opened minus %d paid is %d", row.get("id"), balance,
						INITIAL_BALANCE, paid, INITIAL_BALANCE - paid);
			}
		}
		return "payments " + rows.size() + ", gateway charges " + charges.size() + ", pending " + pending
				+ ", accounts checked " + balances.size();
	}

	private void summary(Duration elapsed, int settled, String database) {
		long fiveHundreds = this.statuses.getOrDefault("500", new AtomicLong()).get();
		StringBuilder text = new StringBuilder();
		text.append(String.format("%nSoak summary%n"));
		text.append(String.format("  run          %s of load (asked %s), %d instances, concurrency %d, seed %d%n",
				elapsed.toSeconds() + "s", this.duration, this.nodes.size(), this.concurrency, this.seed));
		text.append(String.format("  requests     %d, operations %s%n", this.requests.get(),
				new TreeMap<>(this.operations)));
		text.append(String.format("  statuses     %s%n", new TreeMap<>(this.statuses)));
		text.append(String.format("  faults       %s%n", new TreeMap<>(this.faultCounts)));
		text.append(String.format("  keys         %d, settled by retries after the run %d%n", this.payments.size(),
				settled));
		text.append(String.format("  database     %s%n", database));
		text.append(String.format("  500s         %d, all inside fault windows unless listed below%n", fiveHundreds));
		text.append(String.format(
				"  anomalies    %d (double executions %d, mismatched replays %d, 500s outside"
						+ " faults %d, other %d)%n",
				this.anomalies.size(), countAnomalies("double execution"), countAnomalies("mismatched replay"),
				countAnomalies("500 outside"), this.anomalies.size() - countAnomalies("double execution")
						- countAnomalies("mismatched replay") - countAnomalies("500 outside")));
		this.anomalies.stream().limit(50).forEach((anomaly) -> text.append("    ").append(anomaly).append('\n'));
		text.append(String.format("  logs         %s%n", this.output));
		System.out.print(text);
		try {
			Files.writeString(this.output.resolve("summary.txt"), text);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private long countAnomalies(String prefix) {
		return this.anomalies.stream().filter((anomaly) -> anomaly.startsWith(prefix)).count();
	}

	private void anomaly(String format, Object... args) {
		String anomaly = String.format(format, args);
		this.anomalies.add(anomaly);
		log("ANOMALY: %s", anomaly);
	}

	// ---- helpers

	private String option(String name, String defaultValue) {
		return this.options.getOrDefault(name, defaultValue);
	}

	private static Duration duration(String text) {
		Matcher matcher = Pattern.compile("(\\d+)(ms|s|m|h)").matcher(text.trim());
		if (!matcher.matches()) {
			throw new IllegalArgumentException("Not a duration (e.g. 90s, 10m): " + text);
		}
		long amount = Long.parseLong(matcher.group(1));
		return switch (matcher.group(2)) {
			case "ms" -> Duration.ofMillis(amount);
			case "s" -> Duration.ofSeconds(amount);
			case "m" -> Duration.ofMinutes(amount);
			default -> Duration.ofHours(amount);
		};
	}

	private static void count(Map<String, AtomicLong> counts, String name) {
		counts.computeIfAbsent(name, (key) -> new AtomicLong()).incrementAndGet();
	}

	private static String id(String body) {
		Matcher matcher = ID.matcher(body);
		return matcher.find() ? matcher.group(1) : "(no id)";
	}

	private static String sha256(byte[] bytes) {
		try {
			return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes), 0, 8);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static String abbreviate(String text) {
		String line = text.replace('\n', ' ');
		return (line.length() > 300) ? line.substring(0, 300) + "..." : line;
	}

	private static void log(String format, Object... args) {
		System.out.printf("%s %s%n", Instant.now(), String.format(format, args));
	}

	private static void pause(Duration duration) {
		try {
			Thread.sleep(duration.toMillis());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private static final class Payment {

		private final String user;

		private final String key;

		private final String account;

		private final long amount;

		private final List<Outcome> outcomes = new CopyOnWriteArrayList<>();

		private volatile String answeredId;

		private Payment(String user, String key, String account, long amount) {
			this.user = user;
			this.key = key;
			this.account = account;
			this.amount = amount;
		}

		String json() {
			return json(this.amount);
		}

		String otherJson() {
			return json(this.amount + 1);
		}

		private String json(long amount) {
			return "{\"accountId\":\"" + this.account + "\",\"amount\":" + amount
					+ ",\"currency\":\"EUR\",\"description\":\"Soak " + this.key + "\"}";
		}

	}

	private record Outcome(long at, int node, int status, boolean replayed, byte[] body, boolean sameBody) {

		String text() {
			return new String(this.body, StandardCharsets.UTF_8);
		}

	}

	private final class Node implements AutoCloseable {

		private final int index;

		private final TcpProxy redis;

		private final TcpProxy postgres;

		private volatile SampleInstance instance;

		private volatile SampleClient client;

		Node(int index) {
			this.index = index;
			try {
				TestServers.Redis server = TestServers.redis();
				this.redis = TcpProxy.start(server.host(), server.port());
				Matcher url = Pattern.compile("jdbc:postgresql://([^:/]+)(?::(\\d+))?/.*")
					.matcher(TestServers.postgres().jdbcUrl());
				if (!url.matches()) {
					throw new IllegalStateException("Cannot proxy " + TestServers.postgres().jdbcUrl());
				}
				this.postgres = TcpProxy.start(url.group(1),
						(url.group(2) != null) ? Integer.parseInt(url.group(2)) : 5432);
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}

		void launch() {
			String jdbcUrl = TestServers.postgres()
				.jdbcUrl()
				.replaceFirst("//[^/]+/", "//" + this.postgres.host() + ":" + this.postgres.port() + "/");
			Map<String, Object> properties = new LinkedHashMap<>();
			properties.put("server.port", 0);
			properties.put("spring.data.redis.host", this.redis.host());
			properties.put("spring.data.redis.port", this.redis.port());
			properties.put("spring.datasource.url", jdbcUrl);
			properties.put("spring.datasource.username", TestServers.postgres().username());
			properties.put("spring.datasource.password", TestServers.postgres().password());
			properties.put("spring.datasource.hikari.schema", SoakDriver.this.schema);
			properties.put("spring.datasource.hikari.connection-timeout", 3000);
			properties.put("spring.datasource.hikari.maximum-pool-size", 6);
			properties.put("spring.flyway.schemas", SoakDriver.this.schema);
			properties.put("spring.flyway.default-schema", SoakDriver.this.schema);
			properties.put("idempotency.store.type", "tiered");
			properties.put("idempotency.redis.key-prefix", SoakDriver.this.schema + ":");
			properties.put("idempotency.lock-timeout", option("lock-timeout", "2s"));
			properties.put("idempotency.ttl", "1h");
			properties.put("idempotency.policies.payments.ttl", "1h");
			properties.put("payments.demo.enabled", true);
			this.client = null;
			this.instance = SampleInstance.start("instance-" + this.index + "-" + System.currentTimeMillis(),
					properties, List.of("-Xmx384m", "-XX:+UseSerialGC"), SoakDriver.this.output);
		}

		void awaitStarted() {
			this.instance.awaitStarted(duration(option("start-timeout", "5m")));
			this.client = new SampleClient(this.instance.port());
			log("Instance %d up: %s", this.index, this.instance);
		}

		void killAndRestart() {
			this.client = null;
			int status = this.instance.kill();
			if (status != SampleInstance.SIGKILL_EXIT_STATUS) {
				anomaly("instance %d exited with %d after SIGKILL", this.index, status);
			}
			launch();
			awaitStarted();
		}

		@Override
		public void close() {
			if (this.instance != null) {
				this.instance.close();
			}
			this.redis.close();
			this.postgres.close();
		}

	}

}
