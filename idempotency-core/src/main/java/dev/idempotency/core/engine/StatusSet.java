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

package dev.idempotency.core.engine;

import java.util.BitSet;
import java.util.Objects;
import java.util.StringJoiner;

import org.jspecify.annotations.Nullable;

/**
 * Immutable set of HTTP status codes, written as a comma-separated list of codes and
 * classes, for example {@code "5xx,408,429"}.
 * <p>
 * Instances are immutable and thread-safe.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public final class StatusSet {

	/**
	 * The default non-storable statuses: every 5xx, 408 Request Timeout and 429 Too Many
	 * Requests. Responses with these statuses describe a transient condition, so the key
	 * is released and a retry runs the handler again.
	 */
	public static final StatusSet DEFAULT_NON_STORABLE = parse("5xx,408,429");

	private static final int MAX = 1000;

	private final BitSet codes;

	private final String text;

	private StatusSet(BitSet codes, String text) {
		this.codes = codes;
		this.text = text;
	}

	/**
	 * Parse a set from its text form: codes ({@code 408}) and classes ({@code 5xx})
	 * separated by commas; blanks are ignored.
	 * @param text the text, never {@code null}
	 * @return the set
	 * @throws IllegalArgumentException if an element is neither a code from 100 to 999
	 * nor a class from {@code 1xx} to {@code 9xx}
	 */
	public static StatusSet parse(String text) {
		Objects.requireNonNull(text, "'text' must not be null");
		BitSet codes = new BitSet(MAX);
		StringJoiner normalized = new StringJoiner(",");
		for (String part : text.split(",")) {
			String element = part.strip().toLowerCase(java.util.Locale.ROOT);
			if (element.isEmpty()) {
				continue;
			}
			if (element.length() == 3 && element.endsWith("xx") && element.charAt(0) >= '1'
					&& element.charAt(0) <= '9') {
				int base = (element.charAt(0) - '0') * 100;
				codes.set(base, base + 100);
			}
			else {
				int code = parseCode(element);
				codes.set(code);
			}
			normalized.add(element);
		}
		return new StatusSet(codes, normalized.toString());
	}

	/**
	 * Return a set of the given codes.
	 * @param codes the codes, each from 100 to 999
	 * @return the set
	 */
	public static StatusSet of(int... codes) {
		BitSet set = new BitSet(MAX);
		StringJoiner text = new StringJoiner(",");
		for (int code : codes) {
			checkCode(code, String.valueOf(code));
			set.set(code);
			text.add(String.valueOf(code));
		}
		return new StatusSet(set, text.toString());
	}

	/**
	 * Return whether the set contains the given status.
	 * @param status the status
	 * @return {@code true} if contained
	 */
	public boolean contains(int status) {
		return status >= 0 && status < MAX && this.codes.get(status);
	}

	private static int parseCode(String element) {
		int code;
		try {
			code = Integer.parseInt(element);
		}
		catch (NumberFormatException ex) {
			throw new IllegalArgumentException(
					"'" + element + "' is neither an HTTP status code nor a class such as 5xx", ex);
		}
		checkCode(code, element);
		return code;
	}

	private static void checkCode(int code, String element) {
		if (code < 100 || code > 999) {
			throw new IllegalArgumentException("'" + element + "' is not an HTTP status code (100-999)");
		}
	}

	@Override
	public boolean equals(@Nullable Object obj) {
		return (obj instanceof StatusSet other) && this.codes.equals(other.codes);
	}

	@Override
	public int hashCode() {
		return this.codes.hashCode();
	}

	@Override
	public String toString() {
		return this.text;
	}

}
