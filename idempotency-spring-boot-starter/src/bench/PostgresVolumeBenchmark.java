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

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.core.HttpHeader;
import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.spring.store.jdbc.JdbcIdempotencyCleaner;
import dev.idempotency.spring.store.jdbc.JdbcIdempotencySchemaInitializer;
import dev.idempotency.spring.store.jdbc.JdbcIdempotencyStore;

/**
 * The PostgreSQL store at volume: a table prefilled with millions of completed records
 * whose expiries are spread so that they expire at the rate new ones arrive, new records
 * claimed and completed through {@link JdbcIdempotencyStore} at a fixed rate, and the
 * library's {@link JdbcIdempotencyCleaner} run on its schedule. Reports, per window, the
 * achieved rate, the latency of {@code acquire}, what the cleanup deleted and how long it
 * took, the backlog of expired rows still in the table, and the sizes of the table and its
 * indexes. The first phase runs without the cleanup (the latency baseline), the second
 * with it; at the end the acquires that overlapped a cleanup run are compared with those
 * that did not.
 * <p>
 * Run by {@code run-volume-benchmark.sh}; every setting is a system property (see
 * {@link Settings}).
 */
public final class PostgresVolumeBenchmark {

	private static final byte[] BODY = ("{\"id\":\"pay_000000000000000000000000\",\"status\":\"succeeded\","
			+ "\"amount\":4200,\"currency\":\"EUR\",\"account\":\"acc_0000000000000000\",\"created\":1764130000}")
		.getBytes(StandardCharsets.UTF_8);

	private static final StoredResponse RESPONSE = new StoredResponse(201,
			List.of(new HttpHeader("Content-Type", "application/json")), BODY);

	private PostgresVolumeBenchmark() {
	}

	public static void main(String[] args) throws Exception {
		Settings settings = new Settings();
		System.out.println(settings);
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(settings.url);
		config.setUsername(settings.username);
		config.setPassword(settings.password);
		config.setMaximumPoolSize(settings.threads + 2);
		try (HikariDataSource dataSource = new HikariDataSource(config)) {
			String table = settings.table;
			try (Connection connection = dataSource.getConnection(); Statement statement = connection.createStatement()) {
				statement.execute("DROP TABLE IF EXISTS " + table);
				statement.execute("DROP TABLE IF EXISTS " + table + "_schema_history");
			}
			JdbcIdempotencySchemaInitializer initializer = new JdbcIdempotencySchemaInitializer(dataSource);
			initializer.setTableName(table);
			initializer.initialize();
			if (!settings.layoutSql.isBlank()) {
				execute(dataSource, settings.layoutSql.replace("%TABLE%", table));
			}
			JdbcIdempotencyStore store = new JdbcIdempotencyStore(dataSource);
			store.setTableName(table);
			JdbcIdempotencyCleaner cleaner = new JdbcIdempotencyCleaner(dataSource);
			cleaner.setTableName(table);
			cleaner.setBatchSize(settings.batchSize);
			cleaner.setPauseFactor(settings.pauseFactor);
			// the cleanup deletes; only (auto)vacuum makes the space of deleted rows reusable
			try (Connection connection = dataSource.getConnection();
					Statement statement = connection.createStatement();
					ResultSet rs = statement.executeQuery("SHOW autovacuum")) {
				rs.next();
				System.out.println("autovacuum: " + rs.getString(1)
						+ ("on".equals(rs.getString(1)) ? "" : " (deleted rows are never reclaimed: the table grows)"));
			}
			int responseBytes = responseBytes(dataSource, store, table);
			prefill(dataSource, settings, responseBytes);
			new Run(dataSource, store, cleaner, settings).run();
		}
	}

	// the stored size of the response, so that the prefilled rows are as wide as new ones
	private static int responseBytes(HikariDataSource dataSource, JdbcIdempotencyStore store, String table)
			throws SQLException {
		IdempotencyKey key = IdempotencyKey.global("probe");
		OwnerToken token = OwnerToken.generate();
		store.acquire(key, fingerprint(0), token, Duration.ofSeconds(30), Duration.ofMinutes(1));
		store.complete(key, token, RESPONSE, Duration.ofMinutes(1));
		int bytes = (int) queryLong(dataSource, "SELECT octet_length(response) FROM " + table + " LIMIT 1");
		execute(dataSource, "TRUNCATE " + table);
		return bytes;
	}

	private static void prefill(HikariDataSource dataSource, Settings settings, int responseBytes)
			throws SQLException {
		long started = System.nanoTime();
		long chunk = 1_000_000;
		// expiries spread over the records' life from now on, one every 1/rate seconds,
		// so that the prefilled rows expire at the rate at which new ones arrive
		String insert = """
				INSERT INTO %1$s (created_at, lease_expires_at, expires_at, owner_token, status, id, fingerprint,
					scope, idem_key, response, purge_after)
				SELECT e - interval '%2$s seconds', NULL, e, md5(i::text)::uuid, 'C',
					sha256(('prefill-' || i)::bytea), sha256(('fp-' || i)::bytea), '', 'prefill-' || i,
					decode(repeat('ab', %3$s), 'hex'), e
				FROM (SELECT i, now() + (i::float8 / %4$s) * interval '1 second' AS e
					FROM generate_series(%5$s::bigint, %6$s::bigint) AS i) AS s
				""";
		for (long from = 1; from <= settings.rows; from += chunk) {
			long to = Math.min(settings.rows, from + chunk - 1);
			execute(dataSource, insert.formatted(settings.table, settings.ttlSeconds(), responseBytes, settings.rate,
					from, to));
			System.out.printf(Locale.ROOT, "prefill: %,d rows (%.0f s)%n", to, seconds(started));
		}
		execute(dataSource, "VACUUM ANALYZE " + settings.table);
		System.out.printf(Locale.ROOT, "prefill done in %.0f s (stored responses of %d bytes): %s%n", seconds(started),
				responseBytes, sizes(dataSource, settings.table));
	}

	static RequestFingerprint fingerprint(long n) {
		byte[] bytes = new byte[RequestFingerprint.LENGTH];
		for (int i = 0; i < 8; i++) {
			bytes[i] = (byte) (n >>> (8 * i));
		}
		bytes[31] = 1;
		return RequestFingerprint.of(bytes);
	}

	static String sizes(HikariDataSource dataSource, String table) throws SQLException {
		try (Connection connection = dataSource.getConnection();
				Statement statement = connection.createStatement();
				ResultSet rs = statement.executeQuery("SELECT pg_table_size('" + table + "'), pg_indexes_size('"
						+ table + "'), n_live_tup, n_dead_tup, n_tup_upd, n_tup_hot_upd"
						+ " FROM pg_stat_user_tables WHERE relname = '" + table + "'")) {
			rs.next();
			return String.format(Locale.ROOT, "table %,d MB, indexes %,d MB, live ~%,d, dead ~%,d, HOT updates %d%%",
					rs.getLong(1) >> 20, rs.getLong(2) >> 20, rs.getLong(3), rs.getLong(4),
					(rs.getLong(5) > 0) ? rs.getLong(6) * 100 / rs.getLong(5) : 0);
		}
	}

	static void execute(HikariDataSource dataSource, String sql) throws SQLException {
		try (Connection connection = dataSource.getConnection(); Statement statement = connection.createStatement()) {
			statement.execute(sql);
		}
	}

	static long queryLong(HikariDataSource dataSource, String sql) throws SQLException {
		try (Connection connection = dataSource.getConnection();
				Statement statement = connection.createStatement();
				ResultSet rs = statement.executeQuery(sql)) {
			rs.next();
			return rs.getLong(1);
		}
	}

	// CPU time of every PostgreSQL process of this machine (backends, autovacuum, writers)
	static long postgresCpuMicros() {
		long ticks = 0;
		try (Stream<Path> processes = Files.list(Path.of("/proc"))) {
			for (Path process : (Iterable<Path>) processes::iterator) {
				String name = process.getFileName().toString();
				if (!name.chars().allMatch(Character::isDigit)) {
					continue;
				}
				try {
					if (!Files.readString(process.resolve("comm")).strip().equals("postgres")) {
						continue;
					}
					String stat = Files.readString(process.resolve("stat"));
					String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
					// utime and stime, the 14th and 15th fields of the line
					ticks += Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
				}
				catch (IOException | RuntimeException ex) {
					// the process ended meanwhile
				}
			}
		}
		catch (IOException ex) {
			return 0;
		}
		return ticks * 10_000; // USER_HZ is 100 on Linux
	}

	static long jvmCpuMicros() {
		return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
			.getProcessCpuTime() / 1000;
	}

	static double seconds(long sinceNanos) {
		return (System.nanoTime() - sinceNanos) / 1e9;
	}

	/**
	 * The settings, from system properties.
	 */
	static final class Settings {

		final String url = System.getProperty("volume.url", "jdbc:postgresql://127.0.0.1:5432/test");

		final String username = System.getProperty("volume.username", "postgres");

		final String password = System.getProperty("volume.password", "");

		final String table = System.getProperty("volume.table", "idempotency_volume_bench");

		final long rows = Long.getLong("volume.rows", 10_000_000);

		final int rate = Integer.getInteger("volume.rate", 5000);

		final int threads = Integer.getInteger("volume.threads", 16);

		final int baselineSeconds = Integer.getInteger("volume.baseline-seconds", 120);

		final int seconds = Integer.getInteger("volume.seconds", 900);

		final int windowSeconds = Integer.getInteger("volume.window-seconds", 60);

		final int cleanupIntervalSeconds = Integer.getInteger("volume.cleanup-interval-seconds", 60);

		final int batchSize = Integer.getInteger("volume.batch-size", JdbcIdempotencyCleaner.DEFAULT_BATCH_SIZE);

		final double pauseFactor = Double.parseDouble(
				System.getProperty("volume.pause-factor", String.valueOf(JdbcIdempotencyCleaner.DEFAULT_PAUSE_FACTOR)));

		// extra DDL run after the library's schema, %TABLE% standing for the table
		final String layoutSql = System.getProperty("volume.layout-sql", "");

		// the records' life: the prefill's rows expire at the rate new ones arrive
		long ttlSeconds() {
			return this.rows / this.rate;
		}

		@Override
		public String toString() {
			return String.format(Locale.ROOT,
					"rows %,d, rate %,d/s (time to live %,d s), %d threads, baseline %d s, run %d s, cleanup every %d s"
							+ " in batches of %,d, pause factor %s%s",
					this.rows, this.rate, ttlSeconds(), this.threads, this.baselineSeconds, this.seconds,
					this.cleanupIntervalSeconds, this.batchSize, this.pauseFactor,
					this.layoutSql.isBlank() ? "" : ", layout: " + this.layoutSql);
		}

	}

	/**
	 * Latencies of one window, in microseconds.
	 */
	static final class Samples {

		private final long[] values;

		private final AtomicInteger count = new AtomicInteger();

		Samples(int capacity) {
			this.values = new long[capacity];
		}

		void add(long micros) {
			int index = this.count.getAndIncrement();
			if (index < this.values.length) {
				this.values[index] = micros;
			}
		}

		int count() {
			return Math.min(this.count.get(), this.values.length);
		}

		long p99() {
			int n = count();
			if (n == 0) {
				return 0;
			}
			long[] sorted = Arrays.copyOf(this.values, n);
			Arrays.sort(sorted);
			return sorted[(int) (n * 0.99)];
		}

		String summary() {
			int n = count();
			if (n == 0) {
				return "no samples";
			}
			long[] sorted = Arrays.copyOf(this.values, n);
			Arrays.sort(sorted);
			return String.format(Locale.ROOT, "n %,d p50 %,d us p99 %,d us p99.9 %,d us max %,d us", n,
					sorted[n / 2], sorted[(int) (n * 0.99)], sorted[(int) (n * 0.999)], sorted[n - 1]);
		}

	}

	/**
	 * The load, the cleanup and the reports.
	 */
	static final class Run {

		private final HikariDataSource dataSource;

		private final JdbcIdempotencyStore store;

		private final JdbcIdempotencyCleaner cleaner;

		private final Settings settings;

		private final AtomicBoolean stop = new AtomicBoolean();

		private final AtomicBoolean cleaning = new AtomicBoolean();

		private final AtomicReference<Samples> window;

		private final Samples baseline;

		private final Samples duringCleanup;

		private final Samples outsideCleanup;

		// from the end of the first cleanup run on, which deletes what expired during the
		// baseline phase (the JVM and the caches warm by then as well)
		private final Samples steadyDuring;

		private final Samples steadyBetween;

		private volatile boolean steady;

		private final AtomicLong pairs = new AtomicLong();

		private final AtomicLong failures = new AtomicLong();

		private final AtomicLong deleted = new AtomicLong();

		private final AtomicLong cleanupNanos = new AtomicLong();

		private final AtomicLong sequence = new AtomicLong();

		private volatile boolean cleanupPhase;

		Run(HikariDataSource dataSource, JdbcIdempotencyStore store, JdbcIdempotencyCleaner cleaner,
				Settings settings) {
			this.dataSource = dataSource;
			this.store = store;
			this.cleaner = cleaner;
			this.settings = settings;
			int perWindow = settings.rate * settings.windowSeconds * 2;
			this.window = new AtomicReference<>(new Samples(perWindow));
			this.baseline = new Samples(settings.rate * settings.baselineSeconds * 2);
			this.duringCleanup = new Samples(settings.rate * settings.seconds * 2);
			this.outsideCleanup = new Samples(settings.rate * settings.seconds * 2);
			this.steadyDuring = new Samples(settings.rate * settings.seconds * 2);
			this.steadyBetween = new Samples(settings.rate * settings.seconds * 2);
		}

		void run() throws Exception {
			CountDownLatch done = new CountDownLatch(this.settings.threads);
			long start = System.nanoTime();
			// each worker starts a pair every threads/rate seconds, on a fixed schedule
			long periodNanos = 1_000_000_000L * this.settings.threads / this.settings.rate;
			for (int t = 0; t < this.settings.threads; t++) {
				long offset = periodNanos * t / this.settings.threads;
				Thread worker = new Thread(() -> {
					try {
						work(start + offset, periodNanos);
					}
					finally {
						done.countDown();
					}
				}, "volume-" + t);
				worker.start();
			}
			Thread cleanup = new Thread(this::clean, "volume-cleanup");
			cleanup.start();
			long total = this.settings.baselineSeconds + this.settings.seconds;
			long lastPairs = 0;
			long lastDeleted = 0;
			long lastCleanup = 0;
			long lastPostgresCpu = postgresCpuMicros();
			long lastJvmCpu = jvmCpuMicros();
			for (long elapsed = this.settings.windowSeconds; elapsed <= total; elapsed += this.settings.windowSeconds) {
				long wakeAt = start + elapsed * 1_000_000_000L;
				while (System.nanoTime() < wakeAt) {
					Thread.sleep(Math.max(1, (wakeAt - System.nanoTime()) / 1_000_000));
				}
				if (elapsed >= this.settings.baselineSeconds && elapsed < total) {
					this.cleanupPhase = true;
				}
				Samples ended = this.window.getAndSet(new Samples(this.settings.rate * this.settings.windowSeconds * 2));
				long nowPairs = this.pairs.get();
				long nowDeleted = this.deleted.get();
				long nowCleanup = this.cleanupNanos.get();
				long nowPostgresCpu = postgresCpuMicros();
				long nowJvmCpu = jvmCpuMicros();
				long windowPairs = Math.max(1, nowPairs - lastPairs);
				long backlog = queryLong(this.dataSource,
						"SELECT count(*) FROM " + this.settings.table + " WHERE purge_after <= now()");
				System.out.printf(Locale.ROOT,
						"t=%4d s %s | %,6.0f pairs/s, CPU per pair: PostgreSQL %,d us, JVM %,d us | acquire %s | deleted %,d in %.1f s of cleanup | due for deletion, not deleted %,d | %s%n",
						elapsed, elapsed <= this.settings.baselineSeconds ? "no cleanup" : "cleanup   ",
						(nowPairs - lastPairs) / (double) this.settings.windowSeconds,
						(nowPostgresCpu - lastPostgresCpu) / windowPairs, (nowJvmCpu - lastJvmCpu) / windowPairs,
						ended.summary(),
						nowDeleted - lastDeleted, (nowCleanup - lastCleanup) / 1e9, backlog,
						sizes(this.dataSource, this.settings.table));
				lastPairs = nowPairs;
				lastDeleted = nowDeleted;
				lastCleanup = nowCleanup;
				lastPostgresCpu = nowPostgresCpu;
				lastJvmCpu = nowJvmCpu;
			}
			this.stop.set(true);
			done.await();
			cleanup.join();
			System.out.println("acquire without cleanup (baseline phase): " + this.baseline.summary());
			System.out.println("acquire while a cleanup ran:              " + this.duringCleanup.summary());
			System.out.println("acquire between cleanup runs:             " + this.outsideCleanup.summary());
			System.out.println("steady state, from the end of the first cleanup run:");
			System.out.println("acquire while a cleanup ran:              " + this.steadyDuring.summary());
			System.out.println("acquire between cleanup runs:             " + this.steadyBetween.summary());
			System.out.printf(Locale.ROOT, "p99 while a cleanup ran / p99 between runs: %.2f%n",
					this.steadyDuring.p99() / (double) Math.max(1, this.steadyBetween.p99()));
			System.out.printf(Locale.ROOT, "failures %,d%n", this.failures.get());
		}

		private void work(long firstStart, long periodNanos) {
			long next = firstStart;
			while (!this.stop.get()) {
				long now = System.nanoTime();
				if (now < next) {
					java.util.concurrent.locks.LockSupport.parkNanos(next - now);
					continue;
				}
				next += periodNanos;
				long n = this.sequence.incrementAndGet();
				IdempotencyKey key = IdempotencyKey.global("k-" + n + "-" + ThreadLocalRandom.current().nextInt());
				OwnerToken token = OwnerToken.generate();
				Duration ttl = Duration.ofSeconds(this.settings.ttlSeconds());
				try {
					boolean phase = this.cleanupPhase;
					boolean cleaningAtStart = this.cleaning.get();
					long before = System.nanoTime();
					AcquireResult result = this.store.acquire(key, fingerprint(n), token, Duration.ofSeconds(30), ttl);
					long micros = (System.nanoTime() - before) / 1000;
					boolean cleaningAtEnd = this.cleaning.get();
					this.window.get().add(micros);
					if (!phase) {
						this.baseline.add(micros);
					}
					else if (cleaningAtStart || cleaningAtEnd) {
						this.duringCleanup.add(micros);
						if (this.steady) {
							this.steadyDuring.add(micros);
						}
					}
					else {
						this.outsideCleanup.add(micros);
						if (this.steady) {
							this.steadyBetween.add(micros);
						}
					}
					if (!(result instanceof AcquireResult.Acquired) || !this.store.complete(key, token, RESPONSE, ttl)) {
						this.failures.incrementAndGet();
					}
					this.pairs.incrementAndGet();
				}
				catch (RuntimeException ex) {
					this.failures.incrementAndGet();
					System.out.println("failure: " + ex);
				}
			}
		}

		// the library's cleanup on its schedule: one purge per interval once the baseline
		// phase is over
		private void clean() {
			long next = System.nanoTime();
			while (!this.stop.get()) {
				if (!this.cleanupPhase || System.nanoTime() < next) {
					java.util.concurrent.locks.LockSupport.parkNanos(100_000_000L);
					continue;
				}
				next = System.nanoTime() + this.settings.cleanupIntervalSeconds * 1_000_000_000L;
				this.cleaning.set(true);
				long before = System.nanoTime();
				try {
					this.deleted.addAndGet(this.cleaner.purgeExpired());
				}
				catch (RuntimeException ex) {
					System.out.println("cleanup failed: " + ex);
				}
				finally {
					this.cleanupNanos.addAndGet(System.nanoTime() - before);
					this.cleaning.set(false);
					this.steady = true;
				}
			}
		}

	}

}
