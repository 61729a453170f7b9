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

import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;

import dev.idempotency.core.HttpHeader;
import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.StoredResponseCodec;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.spring.store.redis.RedisIdempotencyStore;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisAsyncCommands;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.RedisStringCommands.SetOption;
import org.springframework.data.redis.connection.ReturnType;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.types.Expiration;

/**
 * What the completion costs Redis, against the plain commands a fence-less completion would
 * send (docs/benchmarks/redis.md, "The completion script on Redis 7"). Run by
 * run-completion-cost-benchmark.sh against a private server, so that INFO commandstats and
 * INFO cpu count this program's commands only.
 * <p>
 * Each pass sends its commands one at a time, from one connection, as a request thread does,
 * and reports Redis' own time per command ({@code usec_per_call} of INFO commandstats, the
 * commands a script calls counted under their own names too) and Redis' process CPU per
 * first request (INFO cpu, system calls included). The passes:
 * <ol>
 * <li><b>store</b>: the library's first request, {@code RedisIdempotencyStore.acquire} (a
 * plain {@code SET NX GET}) and {@code complete} (the completion script by
 * {@code EVALSHA}), on a new key each time;</li>
 * <li><b>plain</b>: the same claim and a plain {@code SET} of a completed record of the same
 * size, what a completion without the owner check would send;</li>
 * <li><b>1 prelude</b> to <b>6 + SET</b>: the claim and the completion script cut short
 * after each of its steps, by {@code EVALSHA} with the completion's arguments: what each step
 * adds (6 is the whole script's work, without the branches of a record that is not the
 * caller's);</li>
 * <li><b>function</b>: the claim and the completion script loaded as a Redis function
 * ({@code FUNCTION LOAD}) and called with {@code FCALL}: its helpers are created once, not on
 * every call;</li>
 * <li><b>ifeq</b>, on servers whose {@code SET} takes {@code IFEQ} (Valkey 8.1, Redis 8.4):
 * the claim and <code>SET key completed IFEQ claim PX ttl</code>, a completion fenced by the
 * whole claim's bytes instead of a script (what it would take of the store is in
 * docs/benchmarks/redis.md, "The completion on Redis 8 and Valkey 8.1");</li>
 * <li><b>empty script</b>: the claim and {@code EVALSHA} of {@code return 1} with the same
 * arguments, without the prelude: the least any script call costs.</li>
 * </ol>
 */
public final class RedisCompletionCostBenchmark {

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Duration TTL = Duration.ofHours(24);

	private static final String FUNCTION = "idempotency_cost_complete";

	private RedisCompletionCostBenchmark() {
	}

	// SetOption, deprecated in Spring Data Redis 4.1, as the store uses it (4.0 has nothing else)
	@SuppressWarnings("deprecation")
	public static void main(String[] args) throws Exception {
		String host = System.getProperty("cost.host", "127.0.0.1");
		int port = Integer.getInteger("cost.port", 16381);
		int requests = Integer.getInteger("cost.requests", 50_000);
		int rounds = Integer.getInteger("cost.rounds", 3);
		LettuceConnectionFactory factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration(host, port));
		factory.afterPropertiesSet();
		factory.start();
		RedisIdempotencyStore store = new RedisIdempotencyStore(factory);
		store.setKeyPrefix("cost:");
		// a 201 with a JSON body of the HTTP benchmark's size
		StoredResponse response = new StoredResponse(201,
				List.of(new HttpHeader("Content-Type", "application/json"), new HttpHeader("Location", "/payments/42")),
				("{\"id\":\"pay-42\",\"status\":\"ACCEPTED\",\"account\":\"acc-42\",\"amount\":1299,"
						+ "\"currency\":\"EUR\",\"reference\":\"order-2026-11-23-0001\"}")
					.getBytes(StandardCharsets.UTF_8));
		byte[] completed = completedRecordOfTheSameSize(response);
		// a claim as the store writes it: lease floor, creation time not stamped, claim TTL,
		// fingerprint and owner token
		byte[] claim = Arrays.copyOf(("P" + digits(TTL.minus(LEASE).toMillis()) + digits(0) + digits(TTL.toMillis()))
			.getBytes(StandardCharsets.US_ASCII), 97);
		RequestFingerprint fingerprint = RequestFingerprint.of(new byte[RequestFingerprint.LENGTH]);
		byte[] encoded = new StoredResponseCodec().encode(response);
		// the claim of the script steps: owned by this token, creation time not stamped
		byte[] owner = new byte[OwnerToken.LENGTH];
		Arrays.fill(owner, (byte) 'o');
		System.arraycopy(owner, 0, claim, 81, OwnerToken.LENGTH);
		try (RedisConnection connection = factory.getConnection()) {
			String emptyScript = connection.scriptingCommands()
				.scriptLoad("return 1".getBytes(StandardCharsets.US_ASCII));
			connection.execute("FUNCTION", "LOAD".getBytes(StandardCharsets.US_ASCII),
					"REPLACE".getBytes(StandardCharsets.US_ASCII), completionFunction().getBytes(StandardCharsets.UTF_8));
			@SuppressWarnings("unchecked")
			RedisAsyncCommands<byte[], byte[]> functions = (RedisAsyncCommands<byte[], byte[]>) connection
				.getNativeConnection();
			Map<String, String> steps = new LinkedHashMap<>();
			for (Map.Entry<String, String> step : completionSteps().entrySet()) {
				steps.put(step.getKey(), connection.scriptingCommands()
					.scriptLoad(scriptText(step.getValue()).getBytes(StandardCharsets.UTF_8)));
			}
			boolean ifeq = takesIfeq(connection);
			System.out.printf("# %s, %d first requests per pass, %d rounds%s%n", serverVersion(connection), requests,
					rounds, ifeq ? "" : "; SET takes no IFEQ here: no ifeq pass");
			System.out.printf("%-14s %8s %9s %9s %9s %9s %9s %9s  %s%n", "pass", "round", "cpu/req", "SET",
					"script", "GETRANGE", "TIME", "PTTL", "(cpu: Redis process µs per first request; the others "
							+ "usec_per_call, script of EVALSHA or FCALL)");
			for (int round = 1; round <= rounds; round++) {
				String run = "r" + round + "-";
				pass(connection, "store", round, requests, (i) -> {
					IdempotencyKey key = IdempotencyKey.global(run + "store-" + i);
					OwnerToken token = OwnerToken.generate();
					if (!(store.acquire(key, fingerprint, token, LEASE, TTL) instanceof AcquireResult.Acquired)) {
						throw new IllegalStateException("not acquired: " + key);
					}
					if (!store.complete(key, token, response, TTL)) {
						throw new IllegalStateException("not completed: " + key);
					}
				});
				pass(connection, "plain", round, requests, (i) -> {
					byte[] key = ("cost:plain:" + run + i).getBytes(StandardCharsets.US_ASCII);
					connection.stringCommands().set(key, claim, Expiration.from(TTL), SetOption.ifAbsent());
					connection.stringCommands().set(key, completed, Expiration.from(TTL), SetOption.upsert());
				});
				for (Map.Entry<String, String> step : steps.entrySet()) {
					String sha = step.getValue();
					String name = step.getKey();
					pass(connection, name, round, requests, (i) -> {
						byte[] key = ("cost:" + name + ":" + run + i).getBytes(StandardCharsets.US_ASCII);
						connection.stringCommands().set(key, claim, Expiration.from(TTL), SetOption.ifAbsent());
						Long answer = connection.scriptingCommands()
							.evalSha(sha, ReturnType.INTEGER, 1, key, owner,
									Long.toString(TTL.toMillis()).getBytes(StandardCharsets.US_ASCII), encoded);
						if (answer == null || answer != 1) {
							throw new IllegalStateException(name + " answered " + answer);
						}
					});
				}
				pass(connection, "function", round, requests, (i) -> {
					byte[] key = ("cost:function:" + run + i).getBytes(StandardCharsets.US_ASCII);
					connection.stringCommands().set(key, claim, Expiration.from(TTL), SetOption.ifAbsent());
					// Spring Data Redis has no FCALL: Lettuce's own command
					Object answer = join(functions.fcall(FUNCTION, ScriptOutputType.INTEGER, new byte[][] { key }, owner,
							Long.toString(TTL.toMillis()).getBytes(StandardCharsets.US_ASCII), encoded));
					if (!Long.valueOf(1).equals(answer)) {
						throw new IllegalStateException("function answered " + answer);
					}
				});
				if (ifeq) {
					pass(connection, "ifeq", round, requests, (i) -> {
						byte[] key = ("cost:ifeq:" + run + i).getBytes(StandardCharsets.US_ASCII);
						connection.stringCommands().set(key, claim, Expiration.from(TTL), SetOption.ifAbsent());
						Object answer = connection.execute("SET", key, completed, ascii("IFEQ"), claim, ascii("PX"),
								ascii(Long.toString(TTL.toMillis())));
						if (answer == null) {
							throw new IllegalStateException("SET IFEQ wrote nothing");
						}
					});
				}
				pass(connection, "empty script", round, requests, (i) -> {
					byte[] key = ("cost:empty:" + run + i).getBytes(StandardCharsets.US_ASCII);
					connection.stringCommands().set(key, claim, Expiration.from(TTL), SetOption.ifAbsent());
					connection.scriptingCommands()
						.evalSha(emptyScript, ReturnType.INTEGER, 1, key, new byte[OwnerToken.LENGTH],
								Long.toString(TTL.toMillis()).getBytes(StandardCharsets.US_ASCII), completed);
				});
			}
			connection.serverCommands().flushDb();
		}
		factory.destroy();
	}

	private static void pass(RedisConnection connection, String name, int round, int requests, Request request) {
		// each pass on an empty server: a keyspace that grew over the passes would make the
		// later ones slower
		connection.serverCommands().flushDb();
		connection.serverCommands().resetConfigStats();
		double cpuBefore = cpuSeconds(connection);
		for (int i = 0; i < requests; i++) {
			request.send(i);
		}
		double cpuAfter = cpuSeconds(connection);
		Map<String, String> perCall = usecPerCall(connection);
		System.out.printf("%-14s %8d %9.1f %9s %9s %9s %9s %9s%n", name, round,
				(cpuAfter - cpuBefore) * 1e6 / requests, perCall.getOrDefault("set", "-"),
				perCall.getOrDefault("evalsha", perCall.getOrDefault("fcall", "-")), perCall.getOrDefault("getrange", "-"),
				perCall.getOrDefault("time", "-"), perCall.getOrDefault("pttl", "-"));
	}

	/**
	 * The completion script cut short after each of its steps, each step's text after the
	 * scripts' prelude: what each step adds to a call's time.
	 */
	private static Map<String, String> completionSteps() {
		Map<String, String> steps = new LinkedHashMap<>();
		String owned = "local key = KEYS[1]\nlocal header, state = owned_header(key, ARGV[1])\n"
				+ "if not header or state == ${COMPLETED} then return -2 end\n";
		String clock = owned + "local now = now_millis()\n";
		String created = clock + "local created = created_at(key, header, now)\n";
		String value = created + "local ttl = tonumber(ARGV[2])\n"
				+ "local value = ${COMPLETED} .. digits(now + ttl) .. digits(created)"
				+ " .. string.sub(header, ${CLAIM_TTL_AT}, ${HEADER}) .. ARGV[3]\n";
		steps.put("1 prelude", "return 1");
		steps.put("2 GETRANGE", owned + "return 1");
		steps.put("3 + TIME", clock + "return 1");
		steps.put("4 + PTTL", created + "return 1");
		steps.put("5 + format", value + "return 1");
		steps.put("6 + SET", value + "redis.call('SET', key, value, 'PX', ttl)\nreturn 1");
		return steps;
	}

	/**
	 * The completion script as a Redis function (FUNCTION LOAD, FCALL): the prelude's helpers
	 * are created once, when the library loads, instead of on every call.
	 */
	private static String completionFunction() throws ReflectiveOperationException {
		return "#!lua name=idempotency_cost\n" + scriptText("") + "\nredis.register_function('" + FUNCTION
				+ "', function(KEYS, ARGV)\n" + scriptText(null) + "\nend)\n";
	}

	// the prelude and the step, with the record layout's placeholders replaced as the store
	// replaces them (RedisRecordScripts, package-private: reached by reflection)
	private static String scriptText(@Nullable String step) throws ReflectiveOperationException {
		Class<?> scripts = Class.forName("dev.idempotency.spring.store.redis.RedisRecordScripts");
		Method read = scripts.getDeclaredMethod("read", String.class);
		Method withLayout = scripts.getDeclaredMethod("withLayout", String.class, String.class);
		read.setAccessible(true);
		withLayout.setAccessible(true);
		// null: the completion script itself, without the prelude
		String text = (step != null) ? read.invoke(null, "record") + step : (String) read.invoke(null, "complete");
		return (String) withLayout.invoke(null, text, "step");
	}

	private static Object join(RedisFuture<Object> reply) {
		try {
			return reply.get();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
		catch (ExecutionException ex) {
			throw new IllegalStateException(ex.getCause());
		}
	}

	private static String digits(long number) {
		return String.format("%016d", number);
	}

	// the completed record's size: the header (97 bytes) and the encoded response
	private static byte[] completedRecordOfTheSameSize(StoredResponse response) {
		byte[] encoded = new StoredResponseCodec().encode(response);
		byte[] value = new byte[97 + encoded.length];
		value[0] = 'C';
		System.arraycopy(encoded, 0, value, 97, encoded.length);
		return value;
	}

	private static String serverVersion(RedisConnection connection) {
		Properties server = connection.serverCommands().info("server");
		String valkey = server.getProperty("valkey_version");
		return (valkey != null) ? "Valkey " + valkey : "Redis " + server.getProperty("redis_version");
	}

	// whether SET takes IFEQ: Redis before 8.4 answers a syntax error
	private static boolean takesIfeq(RedisConnection connection) {
		byte[] key = ascii("cost:ifeq-probe");
		try {
			connection.execute("SET", key, ascii("v"), ascii("IFEQ"), ascii("v"));
			return true;
		}
		catch (RuntimeException ex) {
			return false;
		}
		finally {
			connection.keyCommands().del(key);
		}
	}

	private static byte[] ascii(String text) {
		return text.getBytes(StandardCharsets.US_ASCII);
	}

	private static double cpuSeconds(RedisConnection connection) {
		Properties cpu = connection.serverCommands().info("cpu");
		return Double.parseDouble(cpu.getProperty("used_cpu_sys"))
				+ Double.parseDouble(cpu.getProperty("used_cpu_user"));
	}

	// "cmdstat_set" -> "calls=...,usec=...,usec_per_call=1.23,..."
	private static Map<String, String> usecPerCall(RedisConnection connection) {
		Properties stats = connection.serverCommands().info("commandstats");
		Map<String, String> perCall = new LinkedHashMap<>();
		for (String name : stats.stringPropertyNames()) {
			if (!name.startsWith("cmdstat_")) {
				continue;
			}
			List<String> fields = new ArrayList<>(List.of(stats.getProperty(name).split(",")));
			for (String field : fields) {
				if (field.startsWith("usec_per_call=")) {
					perCall.put(name.substring("cmdstat_".length()), field.substring("usec_per_call=".length()));
				}
			}
		}
		return perCall;
	}

	@FunctionalInterface
	private interface Request {

		void send(int i);

	}

}
