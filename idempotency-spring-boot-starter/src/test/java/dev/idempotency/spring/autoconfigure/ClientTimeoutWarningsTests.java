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
import java.util.List;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.spring.store.jdbc.JdbcIdempotencyStore;
import dev.idempotency.spring.store.redis.RedisIdempotencyStore;
import dev.idempotency.spring.store.tiered.TieredIdempotencyStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.JedisPoolConfig;

import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link ClientTimeoutWarnings}: a client time-out that lets a hanging store
 * outlast a third of the smallest lock timeout is named at start-up. Nothing connects.
 *
 * @author Idempotency contributors
 */
class ClientTimeoutWarningsTests {

	private final DefaultListableBeanFactory beanFactory = new DefaultListableBeanFactory();

	private final IdempotencyProperties properties = new IdempotencyProperties();

	private final HikariDataSource dataSource = new HikariDataSource();

	@AfterEach
	void close() {
		this.dataSource.close();
	}

	@Test
	void clientDefaultsAreEachNamedAgainstTheDefaultLockTimeout() {
		tiered(LettuceClientConfiguration.defaultConfiguration(), "jdbc:postgresql://localhost/test");
		assertThat(check()).satisfiesExactlyInAnyOrder(
				(warning) -> assertThat(warning).startsWith("spring.data.redis.timeout")
					.contains("PT1M")
					.contains("PT10S"),
				(warning) -> assertThat(warning).startsWith("spring.datasource.hikari.connection-timeout")
					.contains("PT30S"),
				(warning) -> assertThat(warning).startsWith("pgjdbc socketTimeout").contains("not set"));
	}

	@Test
	void timeOutsBelowAThirdOfTheLockTimeoutAreQuiet() {
		tiered(LettuceClientConfiguration.builder().commandTimeout(Duration.ofSeconds(2)).build(),
				"jdbc:postgresql://localhost/test?socketTimeout=3");
		this.dataSource.setConnectionTimeout(3_000);
		assertThat(check()).isEmpty();
	}

	@Test
	void smallestLockTimeoutOfAnyPolicyIsTheBound() {
		tiered(LettuceClientConfiguration.builder().commandTimeout(Duration.ofSeconds(2)).build(),
				"jdbc:postgresql://localhost/test");
		this.dataSource.setConnectionTimeout(3_000);
		this.dataSource.addDataSourceProperty("socketTimeout", "3");
		IdempotencyPolicyProperties fast = new IdempotencyPolicyProperties();
		fast.setLockTimeout(Duration.ofSeconds(3));
		this.properties.getPolicies().put("fast", fast);
		// the warning names the bound and the lock timeout it is a third of
		assertThat(check()).hasSize(3)
			.allSatisfy((warning) -> assertThat(warning)
				.contains("longer than PT1S, a third of the smallest idempotency lock-timeout (PT3S)"));
	}

	@Test
	void lockTimeoutOfATransactionalPolicyIsNoBound() {
		tiered(LettuceClientConfiguration.builder().commandTimeout(Duration.ofSeconds(2)).build(),
				"jdbc:postgresql://localhost/test?socketTimeout=3");
		this.dataSource.setConnectionTimeout(3_000);
		IdempotencyPolicyProperties accounts = new IdempotencyPolicyProperties();
		accounts.setLockTimeout(Duration.ofSeconds(3));
		accounts.setTransactional(true);
		this.properties.getPolicies().put("accounts", accounts);
		assertThat(check()).isEmpty();
	}

	@Test
	void redisModeChecksOnlyRedis() {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration(),
				LettuceClientConfiguration.defaultConfiguration());
		this.beanFactory.registerSingleton("redisConnectionFactory", factory);
		this.beanFactory.registerSingleton("dataSource", this.dataSource);
		this.beanFactory.registerSingleton("idempotencyStore", new RedisIdempotencyStore(factory));
		assertThat(check()).singleElement().asString().startsWith("spring.data.redis.timeout");
	}

	@Test
	void jedisDefaultsWarnOnlyOfAPoolThatWaitsForEver() {
		redisOnJedis(JedisClientConfiguration.builder().usePooling().build());
		assertThat(check()).singleElement()
			.asString()
			.startsWith("spring.data.redis.jedis.pool.max-wait")
			.contains("not set")
			.contains("PT10S");
	}

	@Test
	void jedisTimeOutsAboveAThirdOfTheLockTimeoutAreEachNamed() {
		JedisPoolConfig pool = new JedisPoolConfig();
		pool.setMaxWait(Duration.ofSeconds(20));
		redisOnJedis(JedisClientConfiguration.builder()
			.readTimeout(Duration.ofSeconds(15))
			.connectTimeout(Duration.ofSeconds(12))
			.usePooling()
			.poolConfig(pool)
			.build());
		assertThat(check()).satisfiesExactlyInAnyOrder(
				(warning) -> assertThat(warning).startsWith("spring.data.redis.timeout (Jedis read time-out) is PT15S"),
				(warning) -> assertThat(warning)
					.startsWith("spring.data.redis.connect-timeout (Jedis connect time-out) is PT12S"),
				(warning) -> assertThat(warning).startsWith("spring.data.redis.jedis.pool.max-wait").contains("PT20S"));
	}

	@Test
	void jedisPoolThatFailsAtOnceWhenExhaustedAndTimeOutsWithinTheBoundAreQuiet() {
		JedisPoolConfig pool = new JedisPoolConfig();
		pool.setBlockWhenExhausted(false);
		redisOnJedis(JedisClientConfiguration.builder().usePooling().poolConfig(pool).build());
		assertThat(check()).isEmpty();
		JedisPoolConfig bounded = new JedisPoolConfig();
		bounded.setMaxWait(Duration.ofSeconds(2));
		this.beanFactory.destroySingletons();
		redisOnJedis(JedisClientConfiguration.builder().usePooling().poolConfig(bounded).build());
		assertThat(check()).isEmpty();
	}

	private void redisOnJedis(JedisClientConfiguration client) {
		JedisConnectionFactory factory = new JedisConnectionFactory(new RedisStandaloneConfiguration(), client);
		this.beanFactory.registerSingleton("redisConnectionFactory", factory);
		this.beanFactory.registerSingleton("idempotencyStore", new RedisIdempotencyStore(factory));
	}

	private void tiered(LettuceClientConfiguration client, String jdbcUrl) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration(), client);
		this.dataSource.setJdbcUrl(jdbcUrl);
		this.beanFactory.registerSingleton("redisConnectionFactory", factory);
		this.beanFactory.registerSingleton("dataSource", this.dataSource);
		this.beanFactory.registerSingleton("idempotencyStore", new TieredIdempotencyStore(
				new RedisIdempotencyStore(factory), new JdbcIdempotencyStore(this.dataSource)));
	}

	private List<String> check() {
		ClientTimeoutWarnings warnings = new ClientTimeoutWarnings(this.beanFactory, this.properties);
		warnings.afterSingletonsInstantiated();
		return warnings.getWarnings();
	}

}
