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

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.function.Supplier;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.AcquireResult;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The round-trip budget of the Redis store (docs/benchmarks/budget.md, "Performance
 * budget"): every operation of {@link RedisIdempotencyStore} is exactly one command,
 * counted per connection with {@link RedisMonitor} (robust against other clients of a
 * shared server). The claim is a plain {@code SET}; only a duplicate of a processing key
 * takes a second command, the script that tells a live lease from a lapsed one.
 *
 * @author Idempotency contributors
 */
@Tag("serial")
class RedisIdempotencyStoreRoundTripIT {

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Duration TTL = Duration.ofMinutes(10);

	private final String prefix = RedisTestServer.uniquePrefix("round-trips");

	private final RequestFingerprint fingerprint = RequestFingerprint.of(new byte[32]);

	private final StoredResponse response = new StoredResponse(200, List.of(),
			"ok".getBytes(StandardCharsets.US_ASCII));

	private RedisConnectionFactory connectionFactory;

	private RedisIdempotencyStore store;

	private RedisMonitor monitor;

	// what a claim costs on this server: a SET NX GET,
	// or, before Redis 7.0, the claim script
	private String claimCommand;

	@BeforeEach
	void setUp() throws IOException {
		RedisTestServer.connectionFactory();
		this.connectionFactory = createConnectionFactory();
		this.store = new RedisIdempotencyStore(this.connectionFactory);
		this.store.setKeyPrefix(this.prefix);
		this.monitor = RedisMonitor.start(RedisTestServer.uri());
		this.claimCommand = RedisMonitor.claimCommand(this.connectionFactory);
	}

	@AfterEach
	void tearDown() throws Exception {
		this.monitor.close();
		RedisTestServer.deleteKeys(this.connectionFactory, this.prefix);
		((DisposableBean) this.connectionFactory).destroy();
	}

	/**
	 * Create the started connection factory of one test, whose commands must all travel
	 * on one connection for {@link RedisMonitor} to count them.
	 * @return the connection factory
	 */
	protected RedisConnectionFactory createConnectionFactory() {
		// a factory of its own whose commands all travel on one shared native connection
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				LettuceConnectionFactory.createRedisConfiguration(RedisTestServer.uri()));
		factory.setShareNativeConnection(true);
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	@Test
	void everyOperationIsOneCommand() throws IOException {
		// the first use of each script may cost an EVAL after the EVALSHA
		exercise(newKey(), OwnerToken.generate());
		IdempotencyKey key = newKey();
		OwnerToken owner = OwnerToken.generate();
		assertOneCommand(this.claimCommand, () -> this.store.acquire(key, this.fingerprint, owner, LEASE, TTL),
				AcquireResult.Acquired.class);
		// a SET NX GET that finds the claim of
		// another owner asks the script what to answer
		assertCommands(this.claimCommand.equals("set") ? List.of("set", "evalsha") : List.of("evalsha"),
				() -> this.store.acquire(key, this.fingerprint, OwnerToken.generate(), LEASE, TTL),
				AcquireResult.InProgress.class);
		assertOneCommand(this.claimCommand, () -> this.store.acquire(key,
				RequestFingerprint.of(new byte[] { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19,
						20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32 }),
				OwnerToken.generate(), LEASE, TTL), AcquireResult.Mismatch.class);
		assertOneCommand("evalsha", () -> this.store.extend(key, owner, LEASE), true);
		assertOneCommand("evalsha", () -> this.store.extend(key, OwnerToken.generate(), LEASE), false);
		assertOneCommand("evalsha", () -> this.store.find(key).isPresent(), true);
		assertOneCommand("evalsha", () -> this.store.release(key, OwnerToken.generate()), false);
		assertOneCommand("evalsha", () -> this.store.complete(key, owner, this.response, TTL), true);
		assertOneCommand("evalsha", () -> this.store.complete(key, owner, this.response, TTL), true);
		assertOneCommand(this.claimCommand,
				() -> this.store.acquire(key, this.fingerprint, OwnerToken.generate(), LEASE, TTL),
				AcquireResult.Replay.class);
		assertOneCommand("del", () -> this.store.evict(key), true);
		assertOneCommand("evalsha", () -> this.store.find(key).isPresent(), false);
		IdempotencyKey released = newKey();
		OwnerToken releasing = OwnerToken.generate();
		assertOneCommand(this.claimCommand, () -> this.store.acquire(released, this.fingerprint, releasing, LEASE, TTL),
				AcquireResult.Acquired.class);
		assertOneCommand("evalsha", () -> this.store.release(released, releasing), true);
	}

	@Test
	void claimingWithTheScriptIsOneCommandToo() throws IOException {
		this.store.setClaimWithScript(true);
		exercise(newKey(), OwnerToken.generate());
		IdempotencyKey key = newKey();
		OwnerToken owner = OwnerToken.generate();
		assertOneCommand("evalsha", () -> this.store.acquire(key, this.fingerprint, owner, LEASE, TTL),
				AcquireResult.Acquired.class);
		assertOneCommand("evalsha", () -> this.store.acquire(key, this.fingerprint, OwnerToken.generate(), LEASE, TTL),
				AcquireResult.InProgress.class);
		assertOneCommand("evalsha", () -> this.store.complete(key, owner, this.response, TTL), true);
		assertOneCommand("evalsha", () -> this.store.acquire(key, this.fingerprint, OwnerToken.generate(), LEASE, TTL),
				AcquireResult.Replay.class);
	}

	private void exercise(IdempotencyKey key, OwnerToken token) {
		this.store.acquire(key, this.fingerprint, token, LEASE, TTL);
		this.store.acquire(key, this.fingerprint, OwnerToken.generate(), LEASE, TTL);
		this.store.extend(key, token, LEASE);
		this.store.find(key);
		this.store.release(key, token);
		this.store.acquire(key, this.fingerprint, token, LEASE, TTL);
		this.store.complete(key, token, this.response, TTL);
		this.store.evict(key);
	}

	private void assertOneCommand(String command, Supplier<Object> operation, Object expected) throws IOException {
		assertCommands(List.of(command), operation, expected);
	}

	private void assertCommands(List<String> expectedCommands, Supplier<Object> operation, Object expected)
			throws IOException {
		Object[] result = new Object[1];
		List<String> commands = this.monitor.commandsOf(this.connectionFactory, () -> result[0] = operation.get());
		if (expected instanceof Class<?> type) {
			assertThat(result[0]).isInstanceOf(type);
		}
		else {
			assertThat(result[0]).isEqualTo(expected);
		}
		assertThat(commands).containsExactlyElementsOf(expectedCommands);
	}

	private static IdempotencyKey newKey() {
		return IdempotencyKey.global("round-trip-" + UUID.randomUUID());
	}

}
