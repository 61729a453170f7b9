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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;

import org.springframework.data.redis.core.script.DigestUtils;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The Lua scripts of {@link RedisIdempotencyStore}, shipped in the jar next to this class
 * and each sent behind the prelude {@value #PRELUDE}{@code .lua}, which holds the helpers
 * the scripts share.
 * <p>
 * The scripts name the record layout with {@code ${NAME}} placeholders, which are
 * replaced here with the numbers and state letters of {@link RedisRecordLayout}, the one
 * place the layout is defined: 1-based positions ({@code OWNER_AT}, {@code OWNER_END}),
 * {@code HEADER} for the header's length and {@code PROCESSING}/{@code COMPLETED} as Lua
 * strings. A script therefore compares with plain numbers: Redis runs a script's whole
 * text on every call, and the same layout held in Lua locals, captured anew by every
 * helper on every call, cost the completion script 19% more of Redis' time per call.
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

	private static final Pattern PLACEHOLDER = Pattern.compile("\\$\\{([A-Z_]+)}");

	/**
	 * The record layout as the scripts name it, in Lua's 1-based positions.
	 */
	static final Map<String, String> LAYOUT = layout();

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
		return new FixedScript<>(withLayout(read(PRELUDE) + read(name), name), resultType);
	}

	/**
	 * Replace the layout's placeholders in a script's text.
	 * @param text the text
	 * @param name the script's name, for the error
	 * @return the text with every placeholder replaced
	 * @throws IllegalStateException if the text names a placeholder the layout lacks
	 */
	static String withLayout(String text, String name) {
		Matcher matcher = PLACEHOLDER.matcher(text);
		StringBuilder result = new StringBuilder(text.length());
		while (matcher.find()) {
			String value = LAYOUT.get(matcher.group(1));
			if (value == null) {
				throw new IllegalStateException(
						"Lua script '" + name + "' names " + matcher.group() + ", which the record layout lacks");
			}
			matcher.appendReplacement(result, Matcher.quoteReplacement(value));
		}
		return matcher.appendTail(result).toString();
	}

	private static Map<String, String> layout() {
		Map<String, String> layout = new HashMap<>();
		layout.put("PROCESSING", "'" + (char) RedisRecordLayout.PROCESSING + "'");
		layout.put("COMPLETED", "'" + (char) RedisRecordLayout.COMPLETED + "'");
		field(layout, "STATE", RedisRecordLayout.STATE_OFFSET, 1);
		field(layout, "TIME", RedisRecordLayout.TIME_OFFSET, RedisRecordLayout.TIME_DIGITS);
		field(layout, "CREATED", RedisRecordLayout.CREATED_OFFSET, RedisRecordLayout.TIME_DIGITS);
		field(layout, "CLAIM_TTL", RedisRecordLayout.CLAIM_TTL_OFFSET, RedisRecordLayout.TIME_DIGITS);
		field(layout, "FINGERPRINT", RedisRecordLayout.FINGERPRINT_OFFSET, RequestFingerprint.LENGTH);
		field(layout, "OWNER", RedisRecordLayout.OWNER_OFFSET, OwnerToken.LENGTH);
		layout.put("HEADER", Integer.toString(RedisRecordLayout.HEADER_LENGTH));
		return Map.copyOf(layout);
	}

	// Lua counts from 1 and string.sub includes its end
	private static void field(Map<String, String> layout, String name, int offset, int length) {
		layout.put(name + "_AT", Integer.toString(offset + 1));
		layout.put(name + "_END", Integer.toString(offset + length));
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
