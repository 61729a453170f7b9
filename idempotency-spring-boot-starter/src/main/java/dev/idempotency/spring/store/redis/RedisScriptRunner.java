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

import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.ReturnType;
import org.springframework.data.redis.core.RedisTemplate;
import org.springframework.data.redis.core.script.DefaultScriptExecutor;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.data.redis.serializer.RedisSerializer;

/**
 * Spring Data Redis' own script execution, {@link DefaultScriptExecutor}, on a connection
 * the store opened for one operation: a script runs by its digest with {@code EVALSHA}
 * and, when the server answers {@code NOSCRIPT}, once more by its text with {@code EVAL}.
 * Keys, arguments and replies stay the store's own bytes.
 * <p>
 * The store does not go through a {@link RedisTemplate}, whose every call would take a
 * connection the application may have bound to the thread for a Redis transaction: there
 * a command is only queued and answers nothing, where a claim must know its answer at
 * once. Thread-safe.
 *
 * @author Idempotency contributors
 */
final class RedisScriptRunner extends DefaultScriptExecutor<byte[]> {

	private static final RedisSerializer<byte[]> BINARY = RedisSerializer.byteArray();

	RedisScriptRunner() {
		// never connected: the executor only asks
		// it how to encode a script's text for EVAL
		super(new RedisTemplate<>());
	}

	/**
	 * Run a script on a single key.
	 * @param <T> the type of the reply: a {@code Long}, or a {@code List} of
	 * {@code byte[]} and {@code Long} elements
	 * @param connection the connection to use
	 * @param script the script
	 * @param keyAndArgs the key followed by the arguments
	 * @return the reply, {@code null} only if the connection queues commands
	 */
	@SuppressWarnings("unchecked")
	<T> @Nullable T run(RedisConnection connection, RedisScript<T> script, byte[]... keyAndArgs) {
		ReturnType returnType = ReturnType.fromJavaType(script.getResultType());
		// the byte-array serializer hands every element back as it came
		return eval(connection, script, returnType, 1, keyAndArgs, (RedisSerializer<T>) BINARY);
	}

}
