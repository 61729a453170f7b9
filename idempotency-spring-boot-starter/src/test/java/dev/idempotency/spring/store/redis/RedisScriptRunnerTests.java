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

import java.nio.charset.StandardCharsets;
import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.dao.InvalidDataAccessApiUsageException;
import org.springframework.data.redis.RedisSystemException;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.ReturnType;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.mockito.AdditionalMatchers.aryEq;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.ArgumentMatchers.same;
import static org.mockito.BDDMockito.given;
import static org.mockito.BDDMockito.then;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;

/**
 * Tests for {@link RedisScriptRunner}: what it sends on a connection, without a server.
 *
 * @author Idempotency contributors
 */
class RedisScriptRunnerTests {

	private final RedisScriptRunner runner = new RedisScriptRunner();

	private final RedisConnection connection = mock(RedisConnection.class);

	private final byte[] key = "idempotency:{k}".getBytes(StandardCharsets.UTF_8);

	private final byte[] argument = { 0, (byte) 0xFF, 'P' };

	@Test
	void knownScriptRunsByItsDigestWithTheBytesAsGiven() {
		given(this.connection.evalSha(RedisRecordScripts.RELEASE.getSha1(), ReturnType.INTEGER, 1, this.key,
				this.argument))
			.willReturn(1L);
		assertThat(this.runner.run(this.connection, RedisRecordScripts.RELEASE, this.key, this.argument)).isEqualTo(1L);
		then(this.connection).should()
			.evalSha(eq(RedisRecordScripts.RELEASE.getSha1()), eq(ReturnType.INTEGER), eq(1), same(this.key),
					same(this.argument));
		then(this.connection).should(never())
			.eval(any(byte[].class), any(ReturnType.class), any(int.class), any(byte[][].class));
	}

	@Test
	void unknownScriptIsSentOnceByItsText() {
		byte[] value = { 'C', 1, 2 };
		given(this.connection.evalSha(RedisRecordScripts.FIND.getSha1(), ReturnType.MULTI, 1, this.key))
			.willThrow(new InvalidDataAccessApiUsageException("NOSCRIPT No matching script. Please use EVAL."));
		byte[] text = RedisRecordScripts.FIND.getScriptAsString().getBytes(StandardCharsets.UTF_8);
		given(this.connection.eval(aryEq(text), eq(ReturnType.MULTI), eq(1), same(this.key)))
			.willReturn(List.of(value, 12L, 1_700_000_000_000L));
		List<Object> reply = this.runner.run(this.connection, RedisRecordScripts.FIND, this.key);
		assertThat(reply).hasSize(3);
		assertThat(reply.get(0)).isSameAs(value);
		assertThat(reply.subList(1, 3)).containsExactly(12L, 1_700_000_000_000L);
		then(this.connection).should().eval(aryEq(text), eq(ReturnType.MULTI), eq(1), same(this.key));
	}

	@Test
	void otherErrorsAreNotRetried() {
		RedisSystemException error = new RedisSystemException("ERR Error running script", null);
		given(this.connection.evalSha(RedisRecordScripts.EXTEND.getSha1(), ReturnType.INTEGER, 1, this.key))
			.willThrow(error);
		assertThatThrownBy(() -> this.runner.run(this.connection, RedisRecordScripts.EXTEND, this.key)).isSameAs(error);
		then(this.connection).should(never())
			.eval(any(byte[].class), any(ReturnType.class), any(int.class), any(byte[][].class));
	}

}
