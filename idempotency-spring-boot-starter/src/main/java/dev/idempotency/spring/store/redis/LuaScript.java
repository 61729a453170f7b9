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
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.ReturnType;

/**
 * A Lua script shipped in the jar, run by its SHA-1 digest with {@code EVALSHA} and, when
 * the server does not know it (script cache flushed, server restarted or failed over), by
 * its text with {@code EVAL}, which also caches it again. Every script is sent with the
 * prelude {@value #PRELUDE}{@code .lua} in front of it: the record layout and the helpers
 * the scripts share.
 *
 * @author Idempotency contributors
 */
final class LuaScript {

	private static final Log logger = LogFactory.getLog(LuaScript.class);

	static final String PRELUDE = "record";

	private final String name;

	private final byte[] source;

	private final String sha1;

	private LuaScript(String name, byte[] source) {
		this.name = name;
		this.source = source;
		this.sha1 = sha1Hex(source);
	}

	/**
	 * Load a script from the class path, next to this class, behind the prelude.
	 * @param name the file name without {@code .lua}
	 * @return the script
	 */
	static LuaScript load(String name) {
		byte[] prelude = read(PRELUDE);
		byte[] script = read(name);
		byte[] source = Arrays.copyOf(prelude, prelude.length + script.length);
		System.arraycopy(script, 0, source, prelude.length, script.length);
		return new LuaScript(name, source);
	}

	private static byte[] read(String name) {
		String resource = name + ".lua";
		try (InputStream in = LuaScript.class.getResourceAsStream(resource)) {
			if (in == null) {
				throw new IllegalStateException("Lua script '" + resource + "' not found next to " + LuaScript.class);
			}
			return in.readAllBytes();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot read Lua script '" + resource + "'", ex);
		}
	}

	/**
	 * Return the script's name.
	 * @return the file name without {@code .lua}
	 */
	String name() {
		return this.name;
	}

	/**
	 * Return the SHA-1 digest by which Redis knows the script.
	 * @return the digest in lower-case hexadecimal
	 */
	String sha1() {
		return this.sha1;
	}

	/**
	 * Run the script on a single key in one round trip, or two when the server has lost
	 * its script cache.
	 * @param <T> the type of the reply
	 * @param connection the connection to use
	 * @param returnType the type of the reply
	 * @param keyAndArgs the key followed by the arguments
	 * @return the reply, {@code null} only if the connection queues commands
	 */
	<T> @Nullable T execute(RedisConnection connection, ReturnType returnType, byte[]... keyAndArgs) {
		try {
			return connection.scriptingCommands().evalSha(this.sha1, returnType, 1, keyAndArgs);
		}
		catch (RuntimeException ex) {
			if (!hasMessage(ex, "NOSCRIPT")) {
				throw ex;
			}
			if (logger.isDebugEnabled()) {
				logger.debug("Redis does not know script '" + this.name + "' (" + this.sha1 + "), sending its text");
			}
			return connection.scriptingCommands().eval(this.source, returnType, 1, keyAndArgs);
		}
	}

	/**
	 * Return whether an exception or one of its causes carries a Redis error message
	 * containing the given text.
	 * @param ex the exception
	 * @param text the text, such as an error code
	 * @return {@code true} if a message in the cause chain contains it
	 */
	static boolean hasMessage(Throwable ex, String text) {
		Throwable candidate = ex;
		// a cause chain could in principle be cyclic: look a few levels deep at most
		for (int depth = 0; candidate != null && depth < 10; depth++) {
			String message = candidate.getMessage();
			if (message != null && message.contains(text)) {
				return true;
			}
			candidate = candidate.getCause();
		}
		return false;
	}

	private static String sha1Hex(byte[] source) {
		try {
			return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(source));
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-1 is not available", ex);
		}
	}

}
