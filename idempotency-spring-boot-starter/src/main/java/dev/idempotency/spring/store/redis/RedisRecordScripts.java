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
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.springframework.data.redis.core.script.DigestUtils;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The Lua scripts of {@link RedisIdempotencyStore}, shipped in the jar next to this class
 * and each sent behind the prelude {@value #PRELUDE}{@code .lua}, which names the record
 * layout of {@link RedisRecordLayout} and the helpers the scripts share.
 * <p>
 * They are plain {@link RedisScript}s: Spring Data Redis runs them by their SHA-1 digest
 * with {@code EVALSHA} and, when the server does not know them (script cache flushed,
 * server restarted or failed over), once by their text with {@code EVAL}, which caches
 * them again. Each is built once, when this class is loaded.
 *
 * @author Idempotency contributors
 */
final class RedisRecordScripts {

	static final String PRELUDE = "record";

	/**
	 * The claim of a processing key, or the whole claim before Redis 7.0. Replies
	 * {@code {code, ...}}.
	 */
	static final RedisScript<List<Object>> ACQUIRE = load("acquire", multi());

	/**
	 * Completes a record its caller owns. Replies 1, 0 or -1.
	 */
	static final RedisScript<Long> COMPLETE = load("complete", Long.class);

	/**
	 * Deletes a processing record its caller owns. Replies 1, 0 or -1.
	 */
	static final RedisScript<Long> RELEASE = load("release", Long.class);

	/**
	 * Moves the lease of a processing record its caller owns. Replies 1, 0 or -1.
	 */
	static final RedisScript<Long> EXTEND = load("extend", Long.class);

	/**
	 * Reads a record with its remaining TTL and the Redis time. Replies {@code {}} or
	 * {@code {value, pttl, now}}.
	 */
	static final RedisScript<List<Object>> FIND = load("find", multi());

	private RedisRecordScripts() {
	}

	/**
	 * Return every script, for whoever must know them all.
	 * @return the scripts
	 */
	static List<RedisScript<?>> all() {
		return List.of(ACQUIRE, COMPLETE, RELEASE, EXTEND, FIND);
	}

	/**
	 * Load a script from the class path behind the prelude.
	 * @param <T> the type of the reply
	 * @param name the file name without {@code .lua}
	 * @param resultType the type of the reply, which also chooses how Redis' reply is
	 * read ({@code List} for an array, {@code Long} for an integer)
	 * @return the script
	 */
	static <T> RedisScript<T> load(String name, Class<T> resultType) {
		return new FixedScript<>(read(PRELUDE) + read(name), resultType);
	}

	/**
	 * Read the text of one Lua file next to this class.
	 * @param name the file name without {@code .lua}
	 * @return the text
	 */
	static String read(String name) {
		String resource = name + ".lua";
		try (InputStream in = RedisRecordScripts.class.getResourceAsStream(resource)) {
			if (in == null) {
				throw new IllegalStateException(
						"Lua script '" + resource + "' not found next to " + RedisRecordScripts.class);
			}
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot read Lua script '" + resource + "'", ex);
		}
	}

	// Spring Data Redis reads an array reply as a list of byte[] and Long elements
	@SuppressWarnings({ "unchecked", "rawtypes" })
	private static Class<List<Object>> multi() {
		return (Class) List.class;
	}

	/**
	 * A script whose text never changes, with its digest computed once. Spring Data's
	 * {@code DefaultRedisScript} takes a lock on every {@code getSha1()} to notice a
	 * changed script source, which would make every script call of every request meet on
	 * one lock.
	 *
	 * @param <T> the type of the reply
	 */
	private static final class FixedScript<T> implements RedisScript<T> {

		private final String text;

		private final String sha1;

		private final Class<T> resultType;

		FixedScript(String text, Class<T> resultType) {
			this.text = text;
			this.sha1 = DigestUtils.sha1DigestAsHex(text);
			this.resultType = resultType;
		}

		@Override
		public String getSha1() {
			return this.sha1;
		}

		@Override
		public Class<T> getResultType() {
			return this.resultType;
		}

		@Override
		public String getScriptAsString() {
			return this.text;
		}

	}

}
