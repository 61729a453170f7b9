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

package dev.idempotency.spring.jmh;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.core.HttpHeader;
import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.StoredResponseCodec;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.spring.store.jdbc.JdbcIdempotencySchemaInitializer;
import dev.idempotency.spring.store.jdbc.JdbcIdempotencyStore;
import dev.idempotency.spring.store.redis.RedisIdempotencyStore;
import dev.idempotency.spring.store.tiered.TieredClaimMode;
import dev.idempotency.spring.store.tiered.TieredIdempotencyStore;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.LettuceFutures;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Scale run (issue #8): acquire and replay latency of the Redis, PostgreSQL and tiered
 * stores with a small and with a large number of completed records already stored.
 * <p>
 * Each record count gets a data set of its own: a Redis database of its own (so that each
 * Redis keyspace holds only that many records) and a PostgreSQL schema of its own. The
 * data sets are measured in interleaved blocks, so that the load of a shared machine
 * weighs on every data set alike and the ratio between them stays meaningful.
 * <p>
 * The program uses its own Redis key prefix and its own PostgreSQL schemas, bulk-loads
 * completed records in the stores' own formats (Redis: pipelined {@code SET ... PX};
 * PostgreSQL: one {@code INSERT ... SELECT FROM generate_series} per 100,000 rows, the
 * record id computed by {@code sha256()} exactly as {@link IdempotencyKey#digest()}),
 * checks that the stores read those records back as replays, and then, at concurrency 1,
 * times {@code acquire} of new keys and {@code acquire} of stored keys (replays, drawn
 * at random from all stored records) through the real store classes. Everything it wrote
 * is deleted at the end, also on failure.
 * <p>
 * Usage: {@code java -cp ... dev.idempotency.spring.jmh.ScaleBenchmark [counts] [samples]
 * [warm-up]}, for instance {@code 1000,1000000 10000 2000}. Servers come from the
 * environment variables {@code IDEMPOTENCY_BENCH_REDIS_URL},
 * {@code IDEMPOTENCY_BENCH_JDBC_URL}, {@code IDEMPOTENCY_BENCH_JDBC_USERNAME} and
 * {@code IDEMPOTENCY_BENCH_JDBC_PASSWORD} (else the {@code IDEMPOTENCY_TEST_*} ones of
 * the tests, else the local defaults); the data sets use the Redis databases from
 * {@code IDEMPOTENCY_BENCH_REDIS_DATABASE} (default 14) upwards. See
 * {@code src/jmh/run-scale-benchmark.sh}.
 *
 * @author Idempotency contributors
 */
public final class ScaleBenchmark {

	private static final PrintStream out = System.out;

	private static final String SCOPE = "scale";

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Duration TTL = Duration.ofHours(2);

	private static final int REDIS_BATCH = 10_000;

	private static final int SQL_BATCH = 100_000;

	private static final int BLOCK = 250;

	private static final RequestFingerprint FINGERPRINT = RequestFingerprint
		.of("scale-run-fingerprint-0123456789".getBytes(StandardCharsets.US_ASCII));

	private static final StoredResponse RESPONSE = new StoredResponse(201,
			List.of(new HttpHeader("Content-Type", "application/json"), new HttpHeader("Location", "/payments/p-1")),
			"{\"id\":\"p-1\",\"amount\":1000,\"currency\":\"EUR\",\"status\":\"captured\"}"
				.getBytes(StandardCharsets.UTF_8));

	private static final List<String> OPERATIONS = List.of("acquire (new key)", "replay (stored key)");

	private final String prefix = "idem-scale-" + UUID.randomUUID() + ":";

	private final String run = UUID.randomUUID().toString().substring(0, 8);

	private final byte[] encodedResponse = new StoredResponseCodec().encode(RESPONSE);

	private final int samples;

	private final int warmUp;

	private RedisURI redisUri;

	private RedisClient redisClient;

	private HikariDataSource dataSource;

	private final List<DataSet> dataSets = new ArrayList<>();

	private int newKeys;

	private ScaleBenchmark(int samples, int warmUp) {
		this.samples = samples;
		this.warmUp = warmUp;
	}

	/**
	 * Run the scale benchmark.
	 * @param args optional: the record counts (comma-separated, ascending), the samples
	 * per measurement and the warm-up operations per measurement
	 * @throws Exception on any failure
	 */
	public static void main(String[] args) throws Exception {
		int[] counts = Arrays.stream(((args.length > 0) ? args[0] : "1000,1000000").split(","))
			.mapToInt((count) -> Integer.parseInt(count.trim().replace("_", "")))
			.toArray();
		int samples = (args.length > 1) ? Integer.parseInt(args[1]) : 5_000;
		int warmUp = (args.length > 2) ? Integer.parseInt(args[2]) : 1_000;
		ScaleBenchmark benchmark = new ScaleBenchmark(samples, warmUp);
		try {
			benchmark.connect();
			int database = Integer.parseInt(env("REDIS_DATABASE", "14"));
			for (int i = 0; i < counts.length; i++) {
				DataSet dataSet = benchmark.createDataSet(counts[i], database + i);
				benchmark.dataSets.add(dataSet);
				benchmark.fill(dataSet);
			}
			benchmark.report(benchmark.measure());
		}
		finally {
			benchmark.cleanUp();
		}
	}

	private void connect() {
		this.redisUri = RedisURI.create(env("REDIS_URL", "redis://127.0.0.1:6379"));
		this.redisClient = RedisClient.create(this.redisUri);
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(env("JDBC_URL", "jdbc:postgresql://127.0.0.1:5432/test"));
		config.setUsername(env("JDBC_USERNAME", "postgres"));
		config.setPassword(env("JDBC_PASSWORD", ""));
		config.setMaximumPoolSize(4);
		config.setPoolName("scale-benchmark");
		this.dataSource = new HikariDataSource(config);
		out.printf("Redis %s, key prefix %s; PostgreSQL %s%n", this.redisUri.getHost() + ":" + this.redisUri.getPort(),
				this.prefix, config.getJdbcUrl());
	}

	private DataSet createDataSet(int count, int database) {
		String schema = "idem_scale_" + this.run + "_" + count;
		String table = schema + ".idempotency_record";
		sql("CREATE SCHEMA " + schema);
		JdbcIdempotencySchemaInitializer initializer = new JdbcIdempotencySchemaInitializer(this.dataSource);
		initializer.setTableName(table);
		initializer.initialize();
		RedisURI uri = RedisURI.builder(this.redisUri).withDatabase(database).build();
		StatefulRedisConnection<byte[], byte[]> connection = this.redisClient.connect(ByteArrayCodec.INSTANCE, uri);
		RedisStandaloneConfiguration redis = new RedisStandaloneConfiguration(uri.getHost(), uri.getPort());
		redis.setDatabase(database);
		LettuceConnectionFactory connectionFactory = new LettuceConnectionFactory(redis);
		connectionFactory.afterPropertiesSet();
		connectionFactory.start();
		DataSet dataSet = new DataSet(count, database, schema, table, connection, connectionFactory);
		RedisIdempotencyStore redisStore = new RedisIdempotencyStore(connectionFactory);
		redisStore.setKeyPrefix(this.prefix);
		JdbcIdempotencyStore jdbcStore = new JdbcIdempotencyStore(this.dataSource);
		jdbcStore.setTableName(table);
		TieredIdempotencyStore tiered = new TieredIdempotencyStore(redisStore, jdbcStore);
		TieredIdempotencyStore tieredLookup = new TieredIdempotencyStore(redisStore, jdbcStore);
		tieredLookup.setClaimMode(TieredClaimMode.LOOKUP);
		dataSet.stores.put("redis", redisStore);
		dataSet.stores.put("postgresql", jdbcStore);
		dataSet.stores.put("tiered (durable claim)", tiered);
		dataSet.stores.put("tiered (lookup claim)", tieredLookup);
		return dataSet;
	}

	// completed records k-1 .. k-count, in both stores
	private void fill(DataSet dataSet) throws Exception {
		long start = System.nanoTime();
		fillRedis(dataSet);
		long redisDone = System.nanoTime();
		fillPostgresql(dataSet);
		long postgresqlDone = System.nanoTime();
		sql("VACUUM ANALYZE " + dataSet.table);
		out.printf(Locale.ROOT,
				"Stored %,d records (Redis database %d, table %s): Redis fill %.1f s, PostgreSQL fill %.1f s%n",
				dataSet.count, dataSet.database, dataSet.table, seconds(redisDone - start),
				seconds(postgresqlDone - redisDone));
		// the loaded records must be what the stores write themselves
		for (int index : new int[] { 1, dataSet.count / 2 + 1, dataSet.count }) {
			for (IdempotencyStore store : List.of(dataSet.stores.get("redis"), dataSet.stores.get("postgresql"))) {
				AcquireResult result = store.acquire(storedKey(index), FINGERPRINT, OwnerToken.generate(), LEASE,
						TTL);
				if (!(result instanceof AcquireResult.Replay replay) || !replay.response().equals(RESPONSE)) {
					throw new IllegalStateException("Loaded record " + index + " is not replayed by "
							+ store.getClass().getSimpleName() + ": " + result);
				}
			}
		}
	}

	private void fillRedis(DataSet dataSet) throws Exception {
		StatefulRedisConnection<byte[], byte[]> connection = dataSet.redisConnection;
		RedisAsyncCommands<byte[], byte[]> commands = connection.async();
		// completed: expiry, creation time and claim TTL, then fingerprint and token
		long now = System.currentTimeMillis();
		byte[] header = ("C" + String.format(Locale.ROOT, "%016d%016d%016d", now + TTL.toMillis(), now,
				TTL.toMillis()))
			.getBytes(StandardCharsets.US_ASCII);
		SetArgs px = SetArgs.Builder.px(TTL.toMillis());
		connection.setAutoFlushCommands(false);
		try {
			List<RedisFuture<?>> pending = new ArrayList<>(REDIS_BATCH);
			for (int index = 1; index <= dataSet.count; index++) {
				byte[] value = concat(header, FINGERPRINT.toByteArray(), OwnerToken.generate().toBytes(),
						this.encodedResponse);
				pending.add(commands.set(redisKey(storedKey(index)), value, px));
				if (pending.size() == REDIS_BATCH || index == dataSet.count) {
					connection.flushCommands();
					awaitAll(pending);
					pending.clear();
				}
			}
		}
		finally {
			connection.setAutoFlushCommands(true);
		}
	}

	private void fillPostgresql(DataSet dataSet) throws SQLException {
		String insert = """
				INSERT INTO %s (id, scope, idem_key, fingerprint, status, owner_token, created_at,
					lease_expires_at, expires_at, response, purge_after)
				SELECT sha256(convert_to(?, 'UTF8') || decode('00', 'hex') || convert_to('k-' || g, 'UTF8')),
					?, 'k-' || g, ?, 'C', gen_random_uuid(), now(), NULL, e, ?, e
				FROM (SELECT g, now() + ? * INTERVAL '1 millisecond' AS e FROM generate_series(?, ?) AS g) AS s
				""".formatted(dataSet.table);
		try (Connection connection = this.dataSource.getConnection();
				PreparedStatement statement = connection.prepareStatement(insert)) {
			for (int start = 1; start <= dataSet.count; start += SQL_BATCH) {
				statement.setString(1, SCOPE);
				statement.setString(2, SCOPE);
				statement.setBytes(3, FINGERPRINT.toByteArray());
				statement.setBytes(4, this.encodedResponse);
				statement.setLong(5, TTL.toMillis());
				statement.setInt(6, start);
				statement.setInt(7, Math.min(dataSet.count, start + SQL_BATCH - 1));
				statement.executeUpdate();
			}
		}
	}

	// interleaved blocks: store by store and operation by operation, every data set takes
	// its turn for BLOCK operations until each has its samples
	private List<Result> measure() {
		List<Result> results = new ArrayList<>();
		SplittableRandom random = new SplittableRandom(42);
		for (String store : this.dataSets.get(0).stores.keySet()) {
			for (String operation : OPERATIONS) {
				Map<DataSet, long[]> timings = new LinkedHashMap<>();
				for (DataSet dataSet : this.dataSets) {
					timings.put(dataSet, new long[this.samples]);
					for (int i = 0; i < this.warmUp; i++) {
						call(dataSet, store, operation, random);
					}
				}
				for (int done = 0; done < this.samples; done += BLOCK) {
					// every other round in reverse order: no data set always goes first
					List<DataSet> order = new ArrayList<>(this.dataSets);
					if ((done / BLOCK) % 2 == 1) {
						Collections.reverse(order);
					}
					for (DataSet dataSet : order) {
						long[] nanos = timings.get(dataSet);
						for (int i = done; i < Math.min(this.samples, done + BLOCK); i++) {
							long start = System.nanoTime();
							call(dataSet, store, operation, random);
							nanos[i] = System.nanoTime() - start;
						}
					}
				}
				for (Map.Entry<DataSet, long[]> entry : timings.entrySet()) {
					long[] nanos = entry.getValue();
					Arrays.sort(nanos);
					Result result = new Result(entry.getKey().count, store, operation, micros(nanos[nanos.length / 2]),
							micros(nanos[(int) (nanos.length * 0.99)]),
							micros(Arrays.stream(nanos).sum() / nanos.length));
					out.printf(Locale.ROOT, "  %,10d records  %-24s %-20s p50 %7.1f us  p99 %8.1f us  mean %7.1f us%n",
							result.records(), store, operation, result.p50(), result.p99(), result.mean());
					results.add(result);
				}
			}
		}
		return results;
	}

	private void call(DataSet dataSet, String storeName, String operation, SplittableRandom random) {
		IdempotencyStore store = dataSet.stores.get(storeName);
		AcquireResult result;
		boolean expected;
		if (operation.equals(OPERATIONS.get(0))) {
			IdempotencyKey key = new IdempotencyKey(SCOPE, "new-" + (++this.newKeys));
			result = store.acquire(key, FINGERPRINT, OwnerToken.generate(), LEASE, TTL);
			expected = result instanceof AcquireResult.Acquired;
		}
		else {
			IdempotencyKey key = storedKey(1 + random.nextInt(dataSet.count));
			result = store.acquire(key, FINGERPRINT, OwnerToken.generate(), LEASE, TTL);
			expected = result instanceof AcquireResult.Replay;
		}
		if (!expected) {
			throw new IllegalStateException(storeName + " answered " + result + " to " + operation);
		}
	}

	private void report(List<Result> results) {
		int base = this.dataSets.get(0).count;
		out.printf(Locale.ROOT,
				"%n| store | operation | records | p50 (us) | p99 (us) | mean (us) | p50 / p50 at %,d |%n", base);
		out.println("|---|---|---:|---:|---:|---:|---:|");
		for (Result result : results) {
			Result first = results.stream()
				.filter((candidate) -> candidate.records() == base && candidate.store().equals(result.store())
						&& candidate.operation().equals(result.operation()))
				.findFirst()
				.orElse(result);
			out.printf(Locale.ROOT, "| %s | %s | %,d | %.1f | %.1f | %.1f | %.2f |%n", result.store(),
					result.operation(), result.records(), result.p50(), result.p99(), result.mean(),
					result.p50() / first.p50());
		}
	}

	private void cleanUp() {
		for (DataSet dataSet : this.dataSets) {
			try {
				long deleted = deleteRedisKeys(dataSet.redisConnection);
				out.printf(Locale.ROOT, "Deleted %,d Redis keys under %s in database %d%n", deleted, this.prefix,
						dataSet.database);
				sql("DROP SCHEMA IF EXISTS " + dataSet.schema + " CASCADE");
				out.println("Dropped schema " + dataSet.schema);
			}
			catch (Exception ex) {
				ex.printStackTrace(out);
				out.println("Clean-up failed: delete Redis keys " + this.prefix + "* in database " + dataSet.database
						+ " and schema " + dataSet.schema + " by hand");
			}
			finally {
				dataSet.connectionFactory.destroy();
				dataSet.redisConnection.close();
			}
		}
		if (this.dataSource != null) {
			this.dataSource.close();
		}
		if (this.redisClient != null) {
			this.redisClient.shutdown();
		}
	}

	private long deleteRedisKeys(StatefulRedisConnection<byte[], byte[]> connection) throws Exception {
		RedisAsyncCommands<byte[], byte[]> commands = connection.async();
		ScanArgs match = ScanArgs.Builder.matches(this.prefix + "*").limit(10_000);
		ScanCursor cursor = ScanCursor.INITIAL;
		long deleted = 0;
		do {
			KeyScanCursor<byte[]> page = commands.scan(cursor, match).get(1, TimeUnit.MINUTES);
			if (!page.getKeys().isEmpty()) {
				deleted += commands.unlink(page.getKeys().toArray(new byte[0][])).get(1, TimeUnit.MINUTES);
			}
			cursor = page;
		}
		while (!cursor.isFinished());
		return deleted;
	}

	private void sql(String sql) {
		try (Connection connection = this.dataSource.getConnection();
				Statement statement = connection.createStatement()) {
			statement.execute(sql);
		}
		catch (SQLException ex) {
			throw new IllegalStateException("Could not run " + sql, ex);
		}
	}

	private static IdempotencyKey storedKey(int index) {
		return new IdempotencyKey(SCOPE, "k-" + index);
	}

	// the layout documented in RedisIdempotencyStore
	private byte[] redisKey(IdempotencyKey key) {
		String digest = Base64.getUrlEncoder().withoutPadding().encodeToString(key.digest());
		return (this.prefix + "{" + digest + "}").getBytes(StandardCharsets.UTF_8);
	}

	private static void awaitAll(List<RedisFuture<?>> futures) {
		if (!LettuceFutures.awaitAll(Duration.ofMinutes(1), futures.toArray(new RedisFuture<?>[0]))) {
			throw new IllegalStateException("Redis did not answer the pipelined writes in time");
		}
	}

	private static byte[] concat(byte[]... parts) {
		int length = 0;
		for (byte[] part : parts) {
			length += part.length;
		}
		byte[] result = new byte[length];
		int offset = 0;
		for (byte[] part : parts) {
			System.arraycopy(part, 0, result, offset, part.length);
			offset += part.length;
		}
		return result;
	}

	private static String env(String name, String defaultValue) {
		String value = System.getenv("IDEMPOTENCY_BENCH_" + name);
		if (value == null) {
			value = System.getenv("IDEMPOTENCY_TEST_" + name);
		}
		return (value != null) ? value : defaultValue;
	}

	private static double micros(long nanos) {
		return nanos / 1000.0;
	}

	private static double seconds(long nanos) {
		return nanos / 1e9;
	}

	/**
	 * The records of one record count: a Redis database and a PostgreSQL table.
	 */
	private static final class DataSet {

		private final int count;

		private final int database;

		private final String schema;

		private final String table;

		private final StatefulRedisConnection<byte[], byte[]> redisConnection;

		private final LettuceConnectionFactory connectionFactory;

		private final Map<String, IdempotencyStore> stores = new LinkedHashMap<>();

		DataSet(int count, int database, String schema, String table,
				StatefulRedisConnection<byte[], byte[]> redisConnection, LettuceConnectionFactory connectionFactory) {
			this.count = count;
			this.database = database;
			this.schema = schema;
			this.table = table;
			this.redisConnection = redisConnection;
			this.connectionFactory = connectionFactory;
		}

	}

	private record Result(int records, String store, String operation, double p50, double p99, double mean) {

	}

}
