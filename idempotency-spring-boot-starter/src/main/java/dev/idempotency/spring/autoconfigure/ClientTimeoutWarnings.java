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

package dev.idempotency.spring.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.BiConsumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.sql.DataSource;

import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.spring.store.jdbc.JdbcIdempotencyStore;
import dev.idempotency.spring.store.redis.RedisIdempotencyStore;
import dev.idempotency.spring.store.tiered.TieredIdempotencyStore;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.BeanWrapper;
import org.springframework.beans.BeanWrapperImpl;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.util.ClassUtils;

/**
 * Warns at start-up about client time-outs that let a hanging store outlast a third of
 * the smallest lock timeout: a renewal that waits that long lets a running handler's
 * lease lapse (docs/operations.md, "Keep every client time-out below a third of the lock
 * timeout"). One line per offending setting; nothing when every setting is within bounds.
 *
 * @author Idempotency contributors
 */
final class ClientTimeoutWarnings implements SmartInitializingSingleton {

	private static final Log logger = LogFactory.getLog(ClientTimeoutWarnings.class);

	private static final String LETTUCE_FACTORY = "org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory";

	private static final String JEDIS_FACTORY = "org.springframework.data.redis.connection.jedis.JedisConnectionFactory";

	private static final String JEDIS = "redis.clients.jedis.Jedis";

	// Lettuce's default command time-out, used when no time-out is configured
	private static final Duration LETTUCE_DEFAULT = Duration.ofSeconds(60);

	private static final Pattern URL_SOCKET_TIMEOUT = Pattern.compile("[?&]socketTimeout=(\\d+)");

	private final ListableBeanFactory beanFactory;

	private final IdempotencyProperties properties;

	// the smallest lock timeout of the policies that renew leases, of which a third
	// bounds
	// every client time-out
	private Duration lockTimeout = Duration.ZERO;

	private final List<String> warnings = new ArrayList<>();

	ClientTimeoutWarnings(ListableBeanFactory beanFactory, IdempotencyProperties properties) {
		this.beanFactory = beanFactory;
		this.properties = properties;
	}

	@Override
	public void afterSingletonsInstantiated() {
		Map<String, IdempotencyStore> stores = this.beanFactory.getBeansOfType(IdempotencyStore.class, false, false);
		if (stores.size() != 1) {
			return;
		}
		IdempotencyStore store = stores.values().iterator().next();
		boolean redis = store instanceof RedisIdempotencyStore || store instanceof TieredIdempotencyStore;
		boolean jdbc = store instanceof JdbcIdempotencyStore || store instanceof TieredIdempotencyStore;
		this.lockTimeout = smallestLockTimeout();
		Duration bound = this.lockTimeout.dividedBy(3);
		if (redis) {
			checkRedis(bound);
		}
		if (jdbc) {
			checkJdbc(bound);
		}
		this.warnings.forEach(logger::warn);
	}

	/**
	 * Return the warnings logged, for tests.
	 * @return the warnings
	 */
	List<String> getWarnings() {
		return this.warnings;
	}

	// The lock timeouts of transactional policies do not count: their requests renew no
	// lease (their transaction holds the key).
	private Duration smallestLockTimeout() {
		Duration smallest = this.properties.getLockTimeout();
		for (IdempotencyPolicyProperties policy : this.properties.getPolicies().values()) {
			IdempotencyPolicyProperties merged = policy.orElse(this.properties);
			Duration lockTimeout = merged.getLockTimeout();
			if (!Boolean.TRUE.equals(merged.getTransactional()) && lockTimeout.compareTo(smallest) < 0) {
				smallest = lockTimeout;
			}
		}
		return smallest;
	}

	private void checkRedis(Duration bound) {
		ClassLoader classLoader = getClass().getClassLoader();
		if (ClassUtils.isPresent(LETTUCE_FACTORY, classLoader)) {
			LettuceTimeouts.commandTimeouts(this.beanFactory)
				.forEach(
						(timeout) -> warnIfAbove("spring.data.redis.timeout (Redis command time-out)", timeout, bound));
		}
		if (ClassUtils.isPresent(JEDIS, classLoader) && ClassUtils.isPresent(JEDIS_FACTORY, classLoader)) {
			JedisTimeouts.check(this.beanFactory, (setting, timeout) -> warnIfAbove(setting, timeout, bound));
		}
	}

	private void checkJdbc(Duration bound) {
		for (DataSource dataSource : this.beanFactory.getBeansOfType(DataSource.class, false, false).values()) {
			BeanWrapper hikari = hikari(dataSource);
			if (hikari == null) {
				continue;
			}
			Object connectionTimeout = hikari.getPropertyValue("connectionTimeout");
			if (connectionTimeout instanceof Long millis) {
				warnIfAbove("spring.datasource.hikari.connection-timeout", Duration.ofMillis(millis), bound);
			}
			Object jdbcUrl = hikari.getPropertyValue("jdbcUrl");
			Duration socketTimeout = socketTimeout(hikari);
			if (socketTimeout != null) {
				String driver = (jdbcUrl instanceof String url && url.startsWith("jdbc:postgresql:")) ? "pgjdbc"
						: "the JDBC driver's";
				warnIfAbove(driver + " socketTimeout (JDBC URL parameter or data-source property)", socketTimeout,
						bound);
			}
		}
	}

	private static @Nullable BeanWrapper hikari(DataSource dataSource) {
		if (!dataSource.getClass().getName().equals("com.zaxxer.hikari.HikariDataSource")) {
			return null;
		}
		return new BeanWrapperImpl(dataSource);
	}

	// pgjdbc's socketTimeout in seconds, MariaDB Connector/J's and MySQL Connector/J's in
	// milliseconds; 0 (their default) waits for ever; null for another driver, of which
	// nothing is known
	private static @Nullable Duration socketTimeout(BeanWrapper hikari) {
		Object jdbcUrl = hikari.getPropertyValue("jdbcUrl");
		if (!(jdbcUrl instanceof String url)) {
			return null;
		}
		boolean seconds = url.startsWith("jdbc:postgresql:");
		if (!seconds && !url.startsWith("jdbc:mariadb:") && !url.startsWith("jdbc:mysql:")) {
			return null;
		}
		String value = null;
		Object properties = hikari.getPropertyValue("dataSourceProperties");
		if (properties instanceof Properties map && map.getProperty("socketTimeout") != null) {
			value = map.getProperty("socketTimeout").trim();
		}
		else {
			Matcher matcher = URL_SOCKET_TIMEOUT.matcher(url);
			value = matcher.find() ? matcher.group(1) : "0";
		}
		long amount = Long.parseLong(value);
		return seconds ? Duration.ofSeconds(amount) : Duration.ofMillis(amount);
	}

	private void warnIfAbove(String setting, Duration value, Duration bound) {
		if (value.isZero() || value.isNegative()) {
			this.warnings.add(setting + " is not set (no time-out): a store that hangs can hold a lease renewal "
					+ "longer than " + bound + ", a third of the smallest idempotency lock-timeout (" + this.lockTimeout
					+ "), so a running handler could lose its key; set it below " + bound);
		}
		else if (value.compareTo(bound) > 0) {
			this.warnings.add(setting + " is " + value + ", longer than " + bound + ", a third of the smallest"
					+ " idempotency lock-timeout (" + this.lockTimeout
					+ "): a store that hangs can hold a lease renewal that long, so a "
					+ "running handler could lose its key; set it below " + bound);
		}
	}

	/**
	 * Reads the time-outs of the Jedis connection factories; only loaded when Jedis is on
	 * the class path. A Jedis command runs on the calling thread: it may wait for a
	 * pooled connection, then for a new connection to open, then for the reply, each
	 * bounded by a setting of its own.
	 */
	private static final class JedisTimeouts {

		static void check(ListableBeanFactory beanFactory, BiConsumer<String, Duration> check) {
			for (org.springframework.data.redis.connection.jedis.JedisConnectionFactory factory : beanFactory
				.getBeansOfType(org.springframework.data.redis.connection.jedis.JedisConnectionFactory.class, false,
						false)
				.values()) {
				org.springframework.data.redis.connection.jedis.JedisClientConfiguration client = factory
					.getClientConfiguration();
				check.accept("spring.data.redis.timeout (Jedis read time-out)", client.getReadTimeout());
				check.accept("spring.data.redis.connect-timeout (Jedis connect time-out)", client.getConnectTimeout());
				if (client.isUsePooling()) {
					client.getPoolConfig()
						.filter(org.apache.commons.pool2.impl.BaseObjectPoolConfig::getBlockWhenExhausted)
						.ifPresent((pool) -> check.accept(
								"spring.data.redis.jedis.pool.max-wait (wait for a pooled Jedis connection)",
								pool.getMaxWaitDuration()));
				}
			}
		}

	}

	/**
	 * Reads the command time-outs of the Lettuce connection factories; only loaded when
	 * Lettuce is on the class path.
	 */
	private static final class LettuceTimeouts {

		static List<Duration> commandTimeouts(ListableBeanFactory beanFactory) {
			List<Duration> timeouts = new ArrayList<>();
			for (org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory factory : beanFactory
				.getBeansOfType(org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory.class, false,
						false)
				.values()) {
				Duration timeout = factory.getClientConfiguration().getCommandTimeout();
				timeouts.add((timeout != null) ? timeout : LETTUCE_DEFAULT);
			}
			return timeouts;
		}

	}

}
